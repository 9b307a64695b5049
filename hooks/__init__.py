"""The raw git hook scripts, shipped inside the wheel as git_retcon.hookscripts."""
