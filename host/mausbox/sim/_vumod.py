# An empty module: the virtual unit's interpreter imports it once for each module object it needs
# (sys, micropython, machine, __main__ as a board has them), since the unix port cannot make one.
