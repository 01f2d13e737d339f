"""The super conductor: the top level's hand-off from the API role to the scheduler and the cells."""
