"""Pure DRA domain logic (no I/O, no clock).

- cel: selector compilation/evaluation (`compile_expression`, `device_env`, `CELError`)
- pools / taints / counters / capacity / constraints: the pieces of allocation
- state.AllocatedState: devices and capacity already taken
- allocator.Allocator: incremental cluster view; `allocate(claims, node, state, now)`
- extended: KEP-5004 special claim for extended resources backed by DRA
- node_allocatable: KEP-5517 node allocatable demand of an allocation
"""
