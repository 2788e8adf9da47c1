"""Drop-in replacements for other tools' writers (``SummaryWriter``), writing our format."""
