-- The source table, in the PostgreSQL database of data source orders-db (docs/cdc.md
-- "Worked example"). Its primary key names the row of an update or a delete.
CREATE TABLE public.orders (
  id        integer PRIMARY KEY,
  customer  text NOT NULL,
  amount    numeric(12, 2) NOT NULL,
  status    text NOT NULL,
  placed_at timestamptz NOT NULL,
  note      text
);
