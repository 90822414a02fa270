"""The attacks: membership signals and their metrics, the bootstrap, LiRA, canaries, matched-utility fronts."""
