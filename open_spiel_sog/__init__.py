"""Student of Games for OpenSpiel."""
