DROP TABLE platform_poll_cursors;
