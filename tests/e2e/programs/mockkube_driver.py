"""The test DRA driver's kubelet-plugin image (a profile's ``kubelet.images`` maps it here):
``mockkube driver run`` of this checkout, as a driver's binary in its DaemonSet's pod."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from mockkube.cli.main import main  # noqa: E402

sys.exit(main(["driver", "run", *sys.argv[1:]]))
