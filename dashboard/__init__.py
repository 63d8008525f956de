"""The dashboard's own pages across the apps: the home page and the counts the navigation shows.
It sits above memory, the agents and the ledger, whose selectors it reads; nothing imports it
but the URLconf and the settings."""
