DROP TABLE assistant_turns;
