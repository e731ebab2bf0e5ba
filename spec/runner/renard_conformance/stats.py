"""Chi-square goodness of fit, stdlib only: the p-value through the regularized incomplete gamma."""

import math

_EPSILON = 1e-15
_MAX_ITERATIONS = 10000


def _lower_series(a: float, x: float) -> float:
    """P(a, x) by its power series; converges fast for x < a + 1."""
    term = total = 1.0 / a
    denominator = a
    for _ in range(_MAX_ITERATIONS):
        denominator += 1.0
        term *= x / denominator
        total += term
        if abs(term) < abs(total) * _EPSILON:
            break
    return total * math.exp(-x + a * math.log(x) - math.lgamma(a))


def _upper_continued_fraction(a: float, x: float) -> float:
    """Q(a, x) by its continued fraction (modified Lentz); converges fast for x >= a + 1."""
    tiny = 1e-300
    b = x + 1.0 - a
    c = 1.0 / tiny
    d = 1.0 / b
    h = d
    for i in range(1, _MAX_ITERATIONS):
        an = -i * (i - a)
        b += 2.0
        d = an * d + b
        d = tiny if abs(d) < tiny else d
        c = b + an / c
        c = tiny if abs(c) < tiny else c
        d = 1.0 / d
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < _EPSILON:
            break
    return h * math.exp(-x + a * math.log(x) - math.lgamma(a))


def regularized_upper_gamma(a: float, x: float) -> float:
    """Q(a, x) = Γ(a, x) / Γ(a), for a > 0 and x >= 0."""
    if a <= 0 or x < 0:
        raise ValueError(f"need a > 0 and x >= 0 (got a={a}, x={x})")
    if x == 0:
        return 1.0
    if x < a + 1.0:
        return max(0.0, 1.0 - _lower_series(a, x))
    return _upper_continued_fraction(a, x)


def chi_square_p_value(statistic: float, degrees_of_freedom: int) -> float:
    """P(X >= statistic) for X chi-square distributed with the given degrees of freedom."""
    return regularized_upper_gamma(degrees_of_freedom / 2.0, statistic / 2.0)


def chi_square(observed: list[int], expected: list[float]) -> tuple[float, int, float]:
    """(statistic, degrees of freedom, p-value) of observed counts against expected counts."""
    statistic = sum((o - e) ** 2 / e for o, e in zip(observed, expected, strict=True))
    degrees = len(observed) - 1
    return statistic, degrees, chi_square_p_value(statistic, degrees)
