//! Forms: authoring, permission settings, responses and their workflow (a state machine).
