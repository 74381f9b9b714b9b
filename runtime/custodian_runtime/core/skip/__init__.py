"""The revision skip: whether a run may end on the hub's word, and the facts a skip decides with."""
