"""The footprint table: per entry, its container image split as the Java seed split
a deployed service (base image, application, the application's share: seeds/003, table 1),
its artifact + runtime as installed, and from a bench run its peak RSS under load and its
start-up. images.py reads the image sizes deploy/images/test_images.py records; table.py
joins them with a run and renders the Markdown table."""
