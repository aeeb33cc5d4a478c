"""`rigcheck blame`: from what a slow or hung job wrote to the node, the device and the cause."""
