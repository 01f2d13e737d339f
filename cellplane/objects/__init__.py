"""The API and cell databases' tables, one module per entity: the only product code that touches them.

Several services share the API database (the API role, the super conductor,
the scheduler) and each cell's database (its conductor, the scheduler,
operator commands), so the code that reads and writes a table lives here in
the ground, once, and every service calls its functions.
"""
