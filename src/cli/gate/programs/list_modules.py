"""The modules an interpreter can import (CONTRACT.md 12.3, run by shadows.rs with `-I`): the
standard library's, the built-in ones and every top-level module on its path, one per line,
sorted."""

import pkgutil
import sys

names = set(sys.stdlib_module_names) | set(sys.builtin_module_names)
names |= {m.name for m in pkgutil.iter_modules()}
print("\n".join(sorted(names)))
