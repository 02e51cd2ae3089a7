DROP TABLE checkin_responses;
DROP TABLE checkins;
