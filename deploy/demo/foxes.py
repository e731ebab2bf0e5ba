"""Draws N fox avatars as SVG files, Renard-1.svg … Renard-N.svg, distinct in colour and shape.

Usage: python3 foxes.py FOLDER [--count N]   (default 21)

Fox k gets its fur hue from the golden-angle sequence (neighbours differ most), and its
ears, snout and eyes from three small cycles of lengths 3, 4 and 5, so that no two of the
first 60 foxes share all four traits. Deterministic: the same k always draws the same fox.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

GOLDEN_ANGLE = 137.508  # degrees
EAR_HEIGHTS = (34, 44, 54)  # px above the head's top, per k mod 3
SNOUT_WIDTHS = (22, 30, 38, 46)  # px, per k mod 4
EYE_SHAPES = ("round", "almond", "sleepy", "wide", "wink")  # per k mod 5


def fur_colour(k: int) -> str:
    hue = (20 + k * GOLDEN_ANGLE) % 360
    return f"hsl({hue:.0f}, 70%, 52%)"


def eye(x: int, y: int, shape: str, left: bool) -> str:
    if shape == "round":
        return f'<circle cx="{x}" cy="{y}" r="7" fill="#222"/>'
    if shape == "almond":
        return f'<ellipse cx="{x}" cy="{y}" rx="9" ry="5" fill="#222"/>'
    if shape == "sleepy":
        return f'<path d="M{x - 9} {y} q9 7 18 0" stroke="#222" stroke-width="4" fill="none"/>'
    if shape == "wide":
        return (
            f'<circle cx="{x}" cy="{y}" r="10" fill="#fff" stroke="#222" stroke-width="2"/>'
            f'<circle cx="{x}" cy="{y + 2}" r="5" fill="#222"/>'
        )
    # wink: the left eye closed, the right one open
    if left:
        return f'<path d="M{x - 9} {y} h18" stroke="#222" stroke-width="4"/>'
    return f'<circle cx="{x}" cy="{y}" r="7" fill="#222"/>'


def fox_svg(k: int) -> str:
    """The SVG document of fox k (k ≥ 1), 200 × 200 px."""
    fur = fur_colour(k)
    ear = EAR_HEIGHTS[k % 3]
    snout = SNOUT_WIDTHS[k % 4]
    shape = EYE_SHAPES[k % 5]
    top = 70
    return f"""<svg xmlns="http://www.w3.org/2000/svg" width="200" height="200" viewBox="0 0 200 200">
<title>Renard {k}</title>
<rect width="200" height="200" fill="#f4efe6"/>
<polygon points="48,{top + 10} 62,{top - ear} 88,{top}" fill="{fur}" stroke="#5a3a22" stroke-width="3"/>
<polygon points="152,{top + 10} 138,{top - ear} 112,{top}" fill="{fur}" stroke="#5a3a22" stroke-width="3"/>
<polygon points="40,{top} 160,{top} 100,175" fill="{fur}" stroke="#5a3a22" stroke-width="3"/>
<polygon points="{100 - snout},128 {100 + snout},128 100,175" fill="#fffaf2"/>
{eye(76, 108, shape, True)}
{eye(124, 108, shape, False)}
<circle cx="100" cy="168" r="6" fill="#222"/>
<text x="100" y="196" font-family="sans-serif" font-size="14" text-anchor="middle" fill="#5a3a22">{k}</text>
</svg>
"""


def write_foxes(folder: Path, count: int) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for k in range(1, count + 1):
        path = folder / f"Renard-{k}.svg"
        path.write_text(fox_svg(k))
        paths.append(path)
    return paths


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Draw N fox avatars as SVG files.")
    parser.add_argument("folder", type=Path)
    parser.add_argument("--count", type=int, default=21)
    args = parser.parse_args(argv)
    if not 1 <= args.count <= 10_000:
        print(f"foxes: --count: must be an integer from 1 to 10000 (got {args.count})", file=sys.stderr)
        return 2
    write_foxes(args.folder, args.count)
    return 0


if __name__ == "__main__":
    sys.exit(main())
