"""`scirag campaign ...`: a literature campaign from a topic to a screened,
rights-checked set of PDFs with a PRISMA 2020 record (scirag.campaign)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import List, Optional

import typer

from scirag.cli_options import DsnOption

NameArg = typer.Argument(..., help="campaign name")
FolderOption = typer.Option(
    None, "--folder", help="campaign folder (default SCIRAG_CAMPAIGNS_DIR or ./campaigns, then <id>-<name>)"
)


def _open(name: str, dsn: Optional[str]):
    from scirag import campaign

    conn = campaign.connect(dsn)
    try:
        return conn, campaign.get(conn, name)
    except campaign.CampaignError as exc:
        conn.close()
        raise typer.BadParameter(str(exc), param_hint="NAME") from None


def _folder(c, folder: Optional[Path]) -> Path:
    from scirag import campaign

    return Path(folder) if folder else campaign.folder_for(c)


def campaign_new(
    name: str = NameArg,
    query: str = typer.Option(..., "--query", help="search query: words, AND, OR, NOT, parentheses, quoted phrases"),
    years: Optional[str] = typer.Option(None, "--years", help="publication years, e.g. 2000-2025"),
    max_records: int = typer.Option(2000, "--max", help="most records kept per source (1-100000)"),
    mailto: Optional[str] = typer.Option(None, "--mailto", help="contact e-mail for the APIs' polite pools"),
    sources: str = typer.Option("openalex,crossref,arxiv", "--sources", help="comma-separated discovery sources"),
    reasons: Optional[List[str]] = typer.Option(None, "--reason", help="an exclusion reason (repeat; default list)"),
    criteria: Optional[str] = typer.Option(None, "--criteria", help="eligibility criteria in words"),
    minilm: float = typer.Option(
        0.0, "--minilm", min=0.0, max=4.0, help="screen with MiniLM embeddings beside TF-IDF at this weight (0: off)"
    ),
    dsn: Optional[str] = DsnOption,
):
    """Create a campaign owned by your role (only members of that role see it)."""
    from scirag import campaign

    conn = campaign.connect(dsn)
    try:
        c = campaign.create(
            conn, name, query, years, max_records, mailto, sources.split(","), reasons, criteria, minilm=minilm
        )
    except campaign.CampaignError as exc:
        raise typer.BadParameter(str(exc)) from None
    finally:
        conn.close()
    print(f"campaign {c.id} {c.name!r} (role {c.owner_role}): sources {', '.join(c.sources)}, max {c.max_records}")
    if c.screen_minilm:
        print(f"screening features: TF-IDF + MiniLM embeddings x {c.screen_minilm:g}")


def campaign_discover(name: str = NameArg, dsn: Optional[str] = DsnOption):
    """Search the sources page by page (resumable), keep at most --max records per
    source, mark duplicates (DOI, then normalised title + year)."""
    from scirag import campaign

    conn, c = _open(name, dsn)
    with conn:
        campaign.discover(conn, c)


def campaign_screen(
    name: str = NameArg,
    next_n: int = typer.Option(0, "--next", min=0, max=100, help="print the next N records as JSON and stop"),
    decide: Optional[List[str]] = typer.Option(
        None, "--decide", help="RECORD_ID=include|exclude:REASON|unsure (repeat); no prompt"
    ),
    llm: int = typer.Option(
        0, "--llm", min=0, max=1000, help="let the configured model (SCIRAG_LLM_PROVIDER) propose N decisions"
    ),
    dsn: Optional[str] = DsnOption,
):
    """Title/abstract screening, most likely relevant record first (active learning,
    retrained after every decision). Interactive unless --next or --decide."""
    from scirag import campaign

    conn, c = _open(name, dsn)
    with conn:
        if llm:
            from scirag_helpers.llm import get_llm

            client = get_llm()
            if client is None:
                raise typer.BadParameter("no model configured: set SCIRAG_LLM_PROVIDER", param_hint="--llm")
            counts = campaign.llm_screen(conn, c, client, llm)
            print(
                f"model screener: {counts['include']} included, {counts['exclude']} excluded, "
                f"{counts['human_review']} handed to a person (human_review)"
            )
            return
        if decide:
            for spec in decide:
                rid, _, what = spec.partition("=")
                decision, _, reason = what.partition(":")
                try:
                    did = campaign.decide(conn, c, int(rid), decision.strip(), reason.strip() or None)
                except (ValueError, campaign.CampaignError) as exc:
                    raise typer.BadParameter(f"{spec}: {exc}", param_hint="--decide") from None
                print(f"decision {did}: record {rid} {decision}" + (f" ({reason})" if reason else ""))
            return
        if next_n:
            rows, stop, model, training = campaign.next_to_screen(conn, c, next_n)
            print(json.dumps({"records": rows, "stopping": stop, "model": model, "training_size": training}))
            return
        while True:
            rows, stop, model, training = campaign.next_to_screen(conn, c, 1)
            print(
                f"\n[{stop['screened']}/{stop['records']} screened, {stop['included']} included; "
                f"{stop['irrelevant_in_a_row']} irrelevant in a row, stop suggested at {stop['stop_after']}]"
            )
            if stop["suggest_stop"]:
                print("The stopping rule is met: you may stop screening (q).")
            if not rows:
                print("Nothing left to screen.")
                return
            r = rows[0]
            print(f"#{r['record_id']}  {r['title']} ({r['year'] or 'n.d.'})")
            print(r["abstract"] or "(no abstract: decide on the title, or mark unsure)")
            key = typer.prompt("[i]nclude, [e]xclude, [u]nsure, [q]uit", default="q").strip().lower()
            if key.startswith("q"):
                return
            if key.startswith("i"):
                campaign.decide(conn, c, r["record_id"], "include", None, "human", model, training, r["score"])
            elif key.startswith("u"):
                campaign.decide(conn, c, r["record_id"], "unsure", None, "human", model, training, r["score"])
            elif key.startswith("e"):
                for k, reason in enumerate(c.exclusion_reasons, 1):
                    print(f"  {k}. {reason}")
                pick = typer.prompt("reason number", default="1").strip()
                if not pick.isdigit() or not 1 <= int(pick) <= len(c.exclusion_reasons):
                    print(f"no reason {pick!r}: not recorded")
                    continue
                campaign.decide(
                    conn,
                    c,
                    r["record_id"],
                    "exclude",
                    c.exclusion_reasons[int(pick) - 1],
                    "human",
                    model,
                    training,
                    r["score"],
                )
            else:
                print(f"unknown answer {key!r}")


def campaign_resolve(name: str = NameArg, dsn: Optional[str] = DsnOption):
    """Open-access locations of the included records (the sources' OA locations, arXiv,
    Unpaywall by DOI when --mailto was given), with their stated licenses."""
    from scirag import campaign

    conn, c = _open(name, dsn)
    with conn:
        campaign.resolve(conn, c)


def campaign_fetch(name: str = NameArg, folder: Optional[Path] = FolderOption, dsn: Optional[str] = DsnOption):
    """Download and verify direct PDFs (status, content type, %PDF, size cap, page
    count, SHA-256) into the campaign folder and write its manifest.jsonl."""
    from scirag import campaign

    conn, c = _open(name, dsn)
    with conn:
        campaign.fetch(conn, c, _folder(c, folder))


def campaign_assess(
    name: str = NameArg,
    next_n: int = typer.Option(0, "--next", min=0, max=100, help="print the next N reports to assess as JSON"),
    decide: Optional[List[str]] = typer.Option(
        None, "--decide", help="RECORD_ID=eligible|exclude:REASON (repeat); no prompt"
    ),
    folder: Optional[Path] = FolderOption,
    dsn: Optional[str] = DsnOption,
):
    """Full-text eligibility: a decision on each retrieved report (eligible, or excluded
    with one of the campaign's reasons). Interactive unless --next or --decide."""
    from scirag import campaign

    conn, c = _open(name, dsn)
    with conn:
        if decide:
            for spec in decide:
                rid, _, what = spec.partition("=")
                decision, _, reason = what.partition(":")
                try:
                    eid = campaign.assess(conn, c, int(rid), decision.strip(), reason.strip() or None)
                except (ValueError, campaign.CampaignError) as exc:
                    raise typer.BadParameter(f"{spec}: {exc}", param_hint="--decide") from None
                print(f"eligibility {eid}: record {rid} {decision}" + (f" ({reason})" if reason else ""))
            return
        if next_n:
            print(json.dumps({"reports": campaign.reports_to_assess(conn, c, next_n)}))
            return
        base = _folder(c, folder)
        while True:
            rows = campaign.reports_to_assess(conn, c, 1)
            if not rows:
                print("No retrieved report waits for a full-text decision.")
                return
            r = rows[0]
            print(f"\n#{r['record_id']}  {r['title']} ({r['year'] or 'n.d.'}), {r['pages']} pages: {base / r['pdf']}")
            key = typer.prompt("[y] eligible, [x] exclude, [q]uit", default="q").strip().lower()
            if key.startswith("q"):
                return
            if key.startswith("y"):
                campaign.assess(conn, c, r["record_id"], "eligible")
            elif key.startswith("x"):
                for k, reason in enumerate(c.exclusion_reasons, 1):
                    print(f"  {k}. {reason}")
                pick = typer.prompt("reason number", default="1").strip()
                if not pick.isdigit() or not 1 <= int(pick) <= len(c.exclusion_reasons):
                    print(f"no reason {pick!r}: not recorded")
                    continue
                campaign.assess(conn, c, r["record_id"], "exclude", c.exclusion_reasons[int(pick) - 1])
            else:
                print(f"unknown answer {key!r}")


def campaign_report(name: str = NameArg, folder: Optional[Path] = FolderOption, dsn: Optional[str] = DsnOption):
    """PRISMA 2020 counts (checked for consistency), flow diagram (prisma.svg) and a
    CSV of every record's decision into the campaign folder."""
    from scirag import campaign

    conn, c = _open(name, dsn)
    with conn:
        try:
            counts = campaign.report(conn, c, _folder(c, folder))
        except campaign.CampaignError as exc:
            raise typer.BadParameter(str(exc)) from None
    print(json.dumps(counts))
