"""Frozen BeautifulSoup readers: the oracle of the lxml readers (see each module)."""
