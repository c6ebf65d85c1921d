"""The offline extractor: ontology-driven, no model.

Entities come from the domain file (declared names and aliases) and from the
corpus (each entity type's ``patterns``); a mention records the surface exactly
as the chunk writes it. Relationships come from pairs of mentions whose types
fit a declared relation type, calibrated as the reference does:

  1.0  direct statement: one sentence, a cue of the relation type between (or
       spanning) the two mentions, no other mention of either type in between;
  0.7  strong implication: one sentence with a cue elsewhere in it, or one
       table row (two cells of a row, or a row label and its column header);
  0.4  inference across sentences: adjacent sentences of one paragraph, a cue
       in either, the nearest mentions of the two types across the boundary.
"""

from __future__ import annotations

import re
from collections import Counter

from scirag.graph.extract import Extraction, ExtractedEntity, ExtractedRelation
from scirag.graph.ontology import Domain
from scirag.graph.text import Lexicon, Match, resolve_overlaps, split_units

MAX_PHRASE = 500


class OfflineExtractor:
    name = "ontology"

    def __init__(self, domain: Domain):
        self.domain = domain
        entries: dict[str, tuple[str, str]] = {}
        for ent in domain.entities:
            for surface in [ent.name, *ent.aliases]:
                # first declaration wins a surface shared by two entities
                entries.setdefault(surface, (ent.name, ent.type))
        self.lexicon = Lexicon(entries)
        self.declared = {(e.name, e.type) for e in domain.entities}
        self.patterns = [(re.compile(p), t.name) for t in domain.entity_types.values() for p in t.patterns]
        self.cues = {
            r.name: [re.compile(rf"(?<![A-Za-z0-9]){re.escape(c)}(?![A-Za-z0-9])", re.IGNORECASE) for c in r.cues]
            for r in domain.relation_types.values()
        }

    # -- entities ----------------------------------------------------------
    def mentions(self, text: str) -> list[Match]:
        found = self.lexicon.find(text)
        extra = []
        for pat, etype in self.patterns:
            for m in pat.finditer(text):
                surface = m.group("name") if "name" in pat.groupindex else m.group(0)
                start = m.start("name") if "name" in pat.groupindex else m.start()
                extra.append(Match(start, start + len(surface), surface, (surface.strip(), etype)))
        if extra:
            # declared names win over pattern hits that overlap them
            keep = [e for e in extra if all(e.end <= f.start or e.start >= f.end for f in found)]
            found = resolve_overlaps(found + keep)
        return found

    # -- relationships -----------------------------------------------------
    def _types(self, a: Match, b: Match):
        """(relation, source match, target match) for every relation type the pair fits."""
        ta, tb = a.key[1], b.key[1]
        out = [(r, a, b) for r in self.domain.relation_for(ta, tb)]
        out += [(r, b, a) for r in self.domain.relation_for(tb, ta)]
        return out

    def _cue(self, rel: str, text: str) -> bool:
        return any(c.search(text) for c in self.cues.get(rel, []))

    def extract(self, text: str, body: str | None = None) -> Extraction:
        result = Extraction()
        units = split_units(text, body)
        unit_mentions: list[list[Match]] = []
        all_mentions = self.mentions(text)
        for u in units:
            lo, hi = u.start, u.start + len(u.text)
            unit_mentions.append([m for m in all_mentions if m.start >= lo and m.end <= hi])
        for m in all_mentions:
            name, etype = m.key
            ent = result.entities.get((name, etype))
            if ent is None:
                ent = result.entities[(name, etype)] = ExtractedEntity(name, etype, (name, etype) in self.declared)
            ent.surfaces[m.surface] = ent.surfaces.get(m.surface, 0) + 1

        def add(rel, src: Match, tgt: Match, phrase: str | list[str], conf: float):
            if src.key == tgt.key:
                return
            # the quote with its whitespace normalised; a table header and its row are two quoted lines
            parts = [phrase] if isinstance(phrase, str) else phrase
            quoted = "\n".join(" ".join(p.split()) for p in parts if p.strip())
            result.add_relation(ExtractedRelation(rel.name, src.key, tgt.key, quoted[:MAX_PHRASE], conf))

        for idx, (u, ms) in enumerate(zip(units, unit_mentions)):
            if u.kind in ("header", "sentence"):
                for i, a in enumerate(ms):
                    for b in ms[i + 1 :]:
                        between_types = {m.key[1] for m in ms if a.end <= m.start and m.end <= b.start}
                        nearest = a.key[1] not in between_types and b.key[1] not in between_types
                        span = text[a.start : b.end]
                        for rel, src, tgt in self._types(a, b):
                            if nearest and self._cue(rel.name, span):
                                add(rel, src, tgt, u.text, 1.0)
                            elif nearest and self._cue(rel.name, u.text):
                                add(rel, src, tgt, u.text, 0.7)
            elif u.kind == "row":
                for i, a in enumerate(ms):
                    for b in ms[i + 1 :]:
                        for rel, src, tgt in self._types(a, b):
                            add(rel, src, tgt, u.text, 0.7)
                if u.header_row is not None and u.cells:
                    hi = units.index(u.header_row)
                    label_end = u.start + u.cells[0][1]
                    labels = [m for m in ms if m.end <= label_end]
                    for a in labels:
                        for b in unit_mentions[hi]:
                            for rel, src, tgt in self._types(a, b):
                                add(rel, src, tgt, [u.header_row.text, u.text], 0.7)
            # across the boundary to the next sentence of the same paragraph
            if u.kind == "sentence" and idx + 1 < len(units):
                v, ns = units[idx + 1], unit_mentions[idx + 1]
                if v.kind != "sentence" or v.paragraph != u.paragraph or not ms or not ns:
                    continue
                # only a lone mention of each type on either side, and neither type
                # present on the other side: otherwise the nearer mention is the subject
                types_u = Counter(m.key[1] for m in ms)
                types_v = Counter(m.key[1] for m in ns)
                for a in ms:
                    for b in ns:
                        ta, tb = a.key[1], b.key[1]
                        if types_u[ta] != 1 or types_v[tb] != 1 or ta in types_v or tb in types_u:
                            continue
                        for rel, src, tgt in self._types(a, b):
                            if self._cue(rel.name, u.text) or self._cue(rel.name, v.text):
                                add(rel, src, tgt, u.text + " " + v.text, 0.4)
        return result
