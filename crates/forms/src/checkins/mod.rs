//! Check-ins (the spec also calls them follow-ups): authoring, schedules, participants and responses.
