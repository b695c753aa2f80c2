"""Generic admission: the attributes of one write and the validating policies (CEL)
evaluated on every create, update and delete of every resource."""
