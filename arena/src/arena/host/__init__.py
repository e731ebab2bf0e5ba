"""The machine under the measurement: CPU caps (cgroup), steal time and load, the conntrack
table, the machine's description.
"""
