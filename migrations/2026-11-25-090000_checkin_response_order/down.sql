CREATE INDEX checkin_responses_checkin_day_idx ON checkin_responses (checkin_id, response_date);
DROP INDEX checkin_responses_checkin_listing_idx;
