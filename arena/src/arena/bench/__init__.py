"""arena bench's sample: one entry in one mode under wrk (measure), and what a run will do and
how long it takes (plan).
"""
