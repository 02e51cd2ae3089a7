-- A check-in's response list reads one page straight from an index (issue 7 §6: a page of 25
-- of 50,000 responses at half the cost floor): newest day first, then in the order the
-- responses came in. The INCLUDE columns let the page's total be counted from the index alone
-- (an index-only scan) under the organization and per-person conditions.
CREATE INDEX checkin_responses_checkin_listing_idx
    ON checkin_responses (checkin_id, response_date DESC, created_at, id)
    INCLUDE (organization_id, user_id);
-- Served by the listing index (same leading columns).
DROP INDEX checkin_responses_checkin_day_idx;
