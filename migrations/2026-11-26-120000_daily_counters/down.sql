DROP TABLE daily_counters;
