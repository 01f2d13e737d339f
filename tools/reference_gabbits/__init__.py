"""Running the reference Placement's gabbi suite against cellplane-placement.

tools/run_reference_gabbits.py is the command; these modules are its parts:
the reference's fixtures over our API (fixtures), the server profiles its
files ask for (profiles), what serves them (live_daemon, in_process), the
expected-failure list and verdict (expectations), the output (report).
"""
