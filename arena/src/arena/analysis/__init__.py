"""The statistics: summaries and ratios (stats), the regression tests (compare), the change points of the history."""
