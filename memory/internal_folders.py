"""What every space's memory starts with: the four internal folders of seed 000, and the user's
documents inside `user`. Data alone: the migration that made the default space's reads it too."""

INTERNAL_FOLDERS = [
    (
        "swarmstar",
        "Data specific to the swarm: logs, reports, directives and information about nodes; the "
        "overarching plan and directive at any moment; documentation about how things in the swarm "
        "work, so that LLMs make better decisions.",
    ),
    (
        "user",
        "Information about the user, and the raw conversations we had with the user: "
        "user_preferences.md says how much and in what the user wants to be involved and their "
        "background; requested_features.md and user_requirements.md say what they asked for.",
    ),
    (
        "projects",
        "Software projects, one project_root_folder each: small scripts, a Python package, a clone "
        "of a repository or a web app.",
    ),
    (
        "references",
        "Documentation and code scraped from the internet that relate to our projects, goals and data.",
    ),
]

USER_DOCUMENTS = [
    (
        "user_preferences.md",
        "How much the user wants to be involved, in what, and their background. Read it to decide "
        "whether to involve the user.",
        "# User preferences\n\n- Involvement: \n- Background: \n",
    ),
    (
        "requested_features.md",
        "Features the user has asked for.",
        "# Requested features\n\n",
    ),
    (
        "user_requirements.md",
        "Requirements and constraints the user has set.",
        "# User requirements\n\n",
    ),
]
