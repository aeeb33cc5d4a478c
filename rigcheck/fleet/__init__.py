"""`rigcheck fleet DIR...`: many nodes' certificates in one table and one page, bad nodes named."""
