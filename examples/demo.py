from __future__ import annotations

print("optcomp demo: filled in by the optimal-composition work")
