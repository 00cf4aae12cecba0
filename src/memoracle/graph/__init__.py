"""The knowledge graph's pure part: the ontology (`ontology`) and entities and relations
found in text by rules (`extract`); storing, merging and querying the graph are not here."""
