import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent.parent / "widget"))  # the widget tests' sessions (widget_sessions)
sys.path.insert(0, str(Path(__file__).parent))  # interop_sessions
