DROP FUNCTION plan_column_place(uuid, uuid, uuid, bigint, bigint);
