DROP TABLE checkin_finished_days;
DROP TABLE checkin_rounds;
