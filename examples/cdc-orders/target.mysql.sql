-- The target table, in the MySQL/MariaDB database of data source orders-replica, written by
-- the `apply` sink mode (docs/cdc.md "Worked example"). DATETIME(6) holds the UTC instant.
CREATE TABLE orders (
  id        INT PRIMARY KEY,
  customer  VARCHAR(200) NOT NULL,
  amount    DECIMAL(12, 2) NOT NULL,
  status    VARCHAR(20) NOT NULL,
  placed_at DATETIME(6) NOT NULL,
  note      MEDIUMTEXT
);
