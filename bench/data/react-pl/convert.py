"""Regenerate docs/ and questions.jsonl of the react-pl set.

docs/ is a raw, byte-identical copy of the Polish translation of the React documentation as it
stood on the old reactjs.org site: repository reactjs/pl.react.dev (formerly pl.reactjs.org) at
COMMIT below, the last commit of the Polish Gatsby site before the new react.dev replaced it,
folder content/docs/: every .md file there (87; nav.yml is not copied), paths relative to
content/docs/. Gatsby pages: YAML front matter (`title:` is the page title; no page has a `# `
heading), `{#id}` heading anchors, `embed:` lines, HTML, `>` note boxes; 22 pages were never
translated and are still in English. Nothing is cleaned.
questions.jsonl is written from QUESTIONS below (hand-written for this set).

Run: python convert.py [--git-dir DIR]
  DIR: a local bare git mirror of the repository; default
  $MIRROR_DIR/reactjs+pl.react.dev/repo.
  Each file is read with `git cat-file blob COMMIT:path` and checked against its git blob id in
  source/blobs.txt; reruns are byte-identical. Without a mirror, docs/ is left as it is, checked
  against the same blob ids, and only questions.jsonl is rewritten.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).parent
REPO = "reactjs/pl.react.dev"
COMMIT = "fa283152c06f890fd530fcc91a3ab61cb520bbfb"
PREFIX = "content/docs/"
MIRROR_NAME = "reactjs+pl.react.dev"
FILES = HERE / "source" / "files.txt"
BLOBS = HERE / "source" / "blobs.txt"

# Hub pages: the glossary, the documentation overview, the API reference pages (each lists many
# APIs, one section or line each), the hooks overview / API / FAQ, the testing overview and the
# add-ons index. Each mentions many topics that have their own page.
HUBS = [
    "reference-glossary.md",
    "getting-started.md",
    "reference-react.md",
    "reference-react-component.md",
    "reference-react-dom.md",
    "hooks-overview.md",
    "hooks-reference.md",
    "hooks-faq.md",
    "testing.md",
    "addons.md",
]

# kind: keyword (short query), question (natural question), conceptual (paraphrased need) -- all
# in Polish --, crosslang (English question, Polish answer), offtopic (the folder cannot answer
# it: no source, no answer).
# source: the page(s) that answer, relative to docs/; answer: a phrase copied verbatim from the
# answering passage (or a list, any one counts); also: the HUBS pages that mention the topic too
# (for people; `semsearch eval` does not score it).
QUESTIONS: list[dict] = [
    # --- keyword (10) ---
    {"question": "przechwytywanie błędów renderowania komponentów",
     "source": "error-boundaries.md",
     "answer": ["przechwytują błędy javascriptowe występujące gdziekolwiek wewnątrz drzewa komponentów ich potomków",
                "Granice błędów przechwytują błędy występujące podczas renderowania"],
     "kind": "keyword", "also": ["reference-react-component.md"]},
    {"question": "leniwe ładowanie komponentu przy pierwszym użyciu",
     "source": "code-splitting.md",
     "answer": ["Funkcja `React.lazy` pozwala renderować dynamicznie importowane komponenty jak zwykłe komponenty",
                "użycie \"leniwego ładowania\" do wczytywania jedynie tych zasobów"],
     "kind": "keyword", "also": ["reference-react.md"]},
    {"question": "kilka elementów obok siebie bez dodatkowego diva",
     "source": "fragments.md",
     "answer": "Fragmenty pozwalają zgrupować listę potomków bez konieczności dodawania zbędnych węzłów do drzewa DOM",
     "kind": "keyword", "also": ["reference-react.md", "reference-react-component.md"]},
    {"question": "unikalny key dla elementów tablicy",
     "source": "lists-and-keys.md",
     "answer": ["Klucze powinny zostać nadane elementom wewnątrz tablicy, aby elementy zyskały stabilną tożsamość",
                "Klucze muszą być unikalne tylko wśród rodzeństwa"],
     "kind": "keyword", "also": ["reference-glossary.md", "hooks-reference.md"]},
    {"question": "wspólny stan dla dwóch komponentów rodzeństwa",
     "source": "lifting-state-up.md",
     "answer": ["proponujemy przeniesienie wspólnego stanu do najbliższego wspólnego przodka",
                "możemy \"wynieść je w górę\" do najbliższego wspólnego przodka"],
     "kind": "keyword", "also": ["reference-glossary.md"]},
    {"question": "motyw kolorystyczny dostępny w całej aplikacji",
     "source": "context.md",
     "answer": "Konteksty zaprojektowano do współdzielenia danych, które można uznać za \"globalne\" dla drzewa komponentów",
     "kind": "keyword",
     "also": ["hooks-reference.md", "hooks-overview.md", "hooks-faq.md", "getting-started.md"]},
    {"question": "input którego wartością steruje stan",
     "source": "forms.md",
     "answer": "Element `input` formularza, kontrolowany w ten sposób przez Reacta, nazywamy \"komponentem kontrolowanym\"",
     "kind": "keyword", "also": ["reference-glossary.md", "reference-react-component.md"]},
    {"question": "porównywanie starego i nowego drzewa przy aktualizacji",
     "source": "reconciliation.md",
     "answer": ["Podczas różnicowania dwóch drzew React najpierw porównuje elementy nadrzędne",
                "React implementuje heurystyczny algorytm o złożoności O(n)"],
     "kind": "keyword", "also": ["reference-glossary.md"]},
    {"question": "walidacja typów propsów w trakcie działania",
     "source": "typechecking-with-proptypes.md",
     "answer": ["Aby rozpocząć sprawdzanie typów właściwości w komponencie, możesz dodać do komponentu specjalną właściwość `propTypes`",
                "Kiedy wartość przekazanej właściwości będzie nieprawidłowego typu, zostanie wyświetlone ostrzeżenie w konsoli javascriptowej"],
     "kind": "keyword", "also": []},
    {"question": "React na istniejącej stronie bez npm i bundlera",
     "source": "add-react-to-a-website.md",
     "answer": ["Nie będziemy instalowali żadnych zależności ani korzystali ze skomplikowanych narzędzi",
                "Być może chcesz jedynie dodać trochę interaktywności do istniejącej strony"],
     "kind": "keyword", "also": ["getting-started.md", "reference-glossary.md"]},
    # --- question (11) ---
    {"question": "Jak wyświetlić okno modalne poza elementem rodzica w drzewie DOM?",
     "source": "portals.md",
     "answer": ["render children into a DOM node that exists outside the DOM hierarchy of the parent component",
                "For example, dialogs, hovercards, and tooltips"],
     "kind": "question", "also": ["reference-react-dom.md", "reference-react-component.md"]},
    {"question": "Jak uruchomić kod po każdym wyrenderowaniu komponentu funkcyjnego?",
     "source": "hooks-effect.md",
     "answer": ["wywoła go po zaktualizowaniu drzewa DOM. Dzieje się to przy każdym renderowaniu, włączając pierwsze",
                "Koncepcja jest taka, żeby działo się to po każdym wyrenderowaniu komponentu"],
     "kind": "question", "also": ["hooks-overview.md", "hooks-reference.md", "hooks-faq.md"]},
    {"question": "Jak nie kopiować tej samej logiki ze stanem i efektem do dwóch komponentów funkcyjnych?",
     "source": "hooks-custom.md",
     "answer": ["Tworzenie własnych hooków pozwala wydzielić logikę z komponentów do funkcji",
                "Kiedy chcemy współdzielić logikę pomiędzy dwoma javascriptowymi funkcjami, wyodrębniamy ją do trzeciej funkcji"],
     "kind": "question", "also": ["hooks-overview.md", "hooks-faq.md"]},
    {"question": "Dlaczego nie wolno wywołać hooka wewnątrz instrukcji if?",
     "source": "hooks-rules.md",
     "answer": ["kolejność wywoływania hooków zostaje zachwiana",
                "zyskujesz pewność, że hooki zostaną wywołane w tej samej kolejności"],
     "kind": "question", "also": ["hooks-overview.md", "hooks-faq.md"]},
    {"question": "Gdzie w komponencie pobierać dane z serwera?",
     "source": "faq-ajax.md",
     "answer": ["Dane należy uzupełniać z wykorzystaniem zapytań AJAX w metodzie",
                "W którym momencie cyklu życia komponentu powinno się wykonać zapytanie AJAX?"],
     "kind": "question", "also": ["getting-started.md", "reference-react-component.md", "hooks-faq.md"]},
    {"question": "Jak najlepiej poukładać pliki i foldery w projekcie?",
     "source": "faq-structure.md",
     "answer": ["React nie sugeruje, w jaki sposób należy umieścić pliki w folderach",
                "Grupowanie plików według funkcjonalności lub ścieżek"],
     "kind": "question", "also": ["getting-started.md"]},
    {"question": "Jak przetestować komponent, który używa setTimeout?",
     "source": ["testing-recipes.md", "testing-environments.md"],
     "answer": ["Możesz używać sztucznych timerów w wybranych przez siebie testach",
                "W środowisku testowym warto zamieniać tego typu funkcje na ich zastępniki"],
     "kind": "question", "also": ["testing.md"]},
    {"question": "Jak przekazać ref z komponentu nadrzędnego do przycisku w środku innego komponentu?",
     "source": "forwarding-refs.md",
     "answer": ["do komponentu \"podajemy dalej\" do jego dziecka",
                "Przekazywanie referencji do komponentów DOM"],
     "kind": "question", "also": ["reference-react.md", "hooks-reference.md"]},
    {"question": "Jak zmierzyć, które komponenty renderują się najdłużej?",
     "source": ["reference-profiler.md", "optimizing-performance.md"],
     "answer": ["The `Profiler` measures how often a React application renders and what the \"cost\" of rendering is",
                "zapewniają zwiększone możliwości profilowania w trybie deweloperskim w połączeniu z Profilerem wtyczki React DevTools"],
     "kind": "question", "also": ["addons.md"]},
    {"question": "Czy mogę pisać komponenty w TypeScripcie?",
     "source": "static-type-checking.md",
     "answer": ["Aby móc używać TypeScriptu, musisz", "Używanie TypeScriptu w Create React App"],
     "kind": "question", "also": ["hooks-faq.md"]},
    {"question": "Jak postawić nową aplikację jedną komendą?",
     "source": "create-a-new-react-app.md",
     "answer": ["npx create-react-app moja-aplikacja", "Stworzenie projektu umożliwią ci następujące komendy"],
     "kind": "question", "also": ["getting-started.md"]},
    # --- conceptual (10) ---
    {"question": "Dołożyć to samo zachowanie do wielu różnych komponentów, owijając każdy z nich",
     "source": "higher-order-components.md",
     "answer": ["komponent wyższego rzędu jest funkcją, która przyjmuje jako argument inny komponent i zwraca nowy komponent",
                "stosowana w celu wielokrotnego używania logiki komponentu"],
     "kind": "conceptual",
     "also": ["reference-react.md", "reference-react-component.md", "hooks-overview.md", "hooks-faq.md"]},
    {"question": "Komponent dostaje funkcję, która decyduje, co ma zostać narysowane",
     "source": "render-props.md",
     "answer": ["Komponent z właściwością renderującą przyjmuje funkcję, zwracającą element reactowy",
                "przy użyciu właściwości, której wartością jest funkcja"],
     "kind": "conceptual", "also": ["hooks-overview.md", "hooks-faq.md"]},
    {"question": "Tryb, który w trakcie developmentu ostrzega o przestarzałych metodach cyklu życia",
     "source": "strict-mode.md",
     "answer": ["Identyfikacji komponentów używających niebezpiecznych metod cyklu życia komponentu",
                "Sprawdzenia dla trybu rygorystycznego są uruchamiane wyłącznie w trybie deweloperskim"],
     "kind": "conceptual", "also": ["reference-react-dom.md"]},
    {"question": "Aplikacja ma być wygodna dla osób korzystających z czytnika ekranu",
     "source": "accessibility.md",
     "answer": ["Wspieranie dostępności jest niezbędne, aby umożliwić technologiom asystującym poprawną interpretację stron",
                "React w pełni wspiera budowanie dostępnych dla wszystkich stron internetowych"],
     "kind": "conceptual", "also": ["testing.md"]},
    {"question": "Komponent renderuje się ponownie, chociaż jego dane się nie zmieniły",
     "source": "optimizing-performance.md",
     "answer": ["możesz nadpisać `shouldComponentUpdate` w taki sposób, aby zwracało `false`",
                "wystarczy odziedziczyć po klasie"],
     "kind": "conceptual", "also": ["reference-react.md", "reference-react-component.md", "hooks-faq.md"]},
    {"question": "Od czego zacząć, gdy dostaję gotowy projekt graficzny i mam go zamienić na komponenty",
     "source": "thinking-in-react.md",
     "answer": ["W pierwszej kolejności zakreśl na projekcie wszystkie komponenty (i podkomponenty) oraz nadaj im nazwy",
                "Podziel interfejs użytkownika na zhierarchizowany układ komponentów"],
     "kind": "conceptual", "also": ["getting-started.md"]},
    {"question": "Pole formularza, którego wartość czytam prosto z DOM zamiast trzymać w stanie",
     "source": "uncontrolled-components.md",
     "answer": "Alternatywą są komponenty niekontrolowane, w których dane formularza są obsługiwane przez sam DOM",
     "kind": "conceptual", "also": ["reference-glossary.md", "reference-react-component.md"]},
    {"question": "Używam pluginu jQuery, który sam zmienia DOM, obok komponentów",
     "source": "integrating-with-other-libraries.md",
     "answer": ["React nie wie nic o zmianach w modelu DOM, które wprowadzono poza Reactem",
                "Integracja z wtyczką Chosen do jQuery"],
     "kind": "conceptual", "also": ["reference-glossary.md"]},
    {"question": "Po co wprowadzono hooki, skoro były już klasy",
     "source": "hooks-intro.md",
     "answer": ["Hooki rozwiązują wiele, pozornie niepowiązanych ze sobą, problemów Reacta",
                "Klasy dezorientują zarówno ludzi, jak i maszyny"],
     "kind": "conceptual", "also": ["hooks-overview.md", "hooks-faq.md"]},
    {"question": "Opisać interfejs zwykłymi wywołaniami funkcji zamiast składni podobnej do HTML",
     "source": "react-without-jsx.md",
     "answer": ["JSX nie jest wymagany do korzystania z Reacta",
                "Wszystko więc, co da się zrobić korzystając z JSX, można również uzyskać za pomocą zwykłego JavaScriptu"],
     "kind": "conceptual", "also": ["reference-react.md", "reference-glossary.md"]},
    # --- crosslang: English questions about the Polish docs (3) ---
    {"question": "How do I include React from a CDN with a script tag?",
     "source": ["cdn-links.md", "add-react-to-a-website.md"],
     "answer": ["Zarówno React, jak i ReactDOM są dostępne przez CDN", "Pierwsze dwa znaczniki wczytają Reacta"],
     "kind": "crosslang", "also": ["reference-glossary.md", "getting-started.md", "addons.md"]},
    {"question": "What is the virtual DOM in React?",
     "source": "faq-internals.md",
     "answer": "Wirtualny model DOM (VDOM) to koncepcja programistyczna",
     "kind": "crosslang", "also": []},
    {"question": "How do I test React components with Jest and a fake DOM?",
     "source": "testing-environments.md",
     "answer": ["Jest jako narzędzie uruchamiające testy, jsdom służący do renderowania",
                "Zalecamy więc symulowanie zachowań przeglądarki za pomocą"],
     "kind": "crosslang", "also": ["testing.md", "hooks-faq.md"]},
    # --- offtopic (6): nothing in the folder answers them (checked with grep) ---
    {"question": "Jak wdrożyć gotową aplikację na Netlify albo Vercel?", "kind": "offtopic"},
    {"question": "Jak dodać Tailwind CSS do projektu?", "kind": "offtopic"},
    {"question": "Jak sprawić, żeby aplikacja działała offline dzięki service workerowi?", "kind": "offtopic"},
    {"question": "Jak obsłużyć tłumaczenia interfejsu na kilka języków (i18n)?", "kind": "offtopic"},
    {"question": "Jak zalogować użytkownika przez Google (OAuth) i przechowywać token JWT?", "kind": "offtopic"},
    {"question": "Jak cache'ować zapytania do API za pomocą React Query?", "kind": "offtopic"},
]


def folded(text: str) -> str:
    return " ".join(text.split()).lower()


def as_list(value) -> list[str]:
    return [value] if isinstance(value, str) else list(value or [])


def blob_id(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def repo_paths() -> list[str]:
    return [p for p in FILES.read_text(encoding="utf-8").splitlines() if p]


def expected_blobs() -> dict[str, str]:
    rows = (line.split("  ", 1) for line in BLOBS.read_text(encoding="utf-8").splitlines() if line)
    return {path: sha for sha, path in rows}


def copy_docs(git_dir: Path) -> None:
    tree = subprocess.run(["git", f"--git-dir={git_dir}", "ls-tree", "-r", "--name-only", COMMIT, "--", PREFIX],
                          check=True, capture_output=True, text=True).stdout.splitlines()
    if sorted(p for p in tree if p.endswith(".md")) != sorted(repo_paths()):
        sys.exit(f"source/files.txt differs from the .md files under {PREFIX} at COMMIT")
    blobs = expected_blobs()
    docs_dir = HERE / "docs"
    shutil.rmtree(docs_dir, ignore_errors=True)
    for path in repo_paths():
        data = subprocess.run(["git", f"--git-dir={git_dir}", "cat-file", "blob", f"{COMMIT}:{path}"],
                              check=True, capture_output=True).stdout
        if blob_id(data) != blobs[path]:
            sys.exit(f"blob id mismatch for {path}")
        target = docs_dir / path[len(PREFIX):]
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)


def check_docs() -> None:
    blobs = expected_blobs()
    for path in repo_paths():
        target = HERE / "docs" / path[len(PREFIX):]
        if not target.is_file() or blob_id(target.read_bytes()) != blobs[path]:
            sys.exit(f"docs/{path[len(PREFIX):]} is missing or differs from {REPO}@{COMMIT[:12]}")
    listed = {path[len(PREFIX):] for path in repo_paths()}
    extra = sorted(p.relative_to(HERE / "docs").as_posix() for p in (HERE / "docs").rglob("*")
                   if p.is_file() and p.relative_to(HERE / "docs").as_posix() not in listed)
    if extra:
        sys.exit(f"docs/ holds files not in source/files.txt: {extra[:5]}")


def write_questions() -> int:
    docs = HERE / "docs"
    for q in QUESTIONS:
        sources, answers = as_list(q.get("source")), as_list(q.get("answer"))
        assert (q["kind"] == "offtopic") == (not sources), q
        texts = [folded((docs / s).read_text(encoding="utf-8")) for s in sources]
        for answer in answers:
            assert any(folded(answer) in t for t in texts), (q["question"], answer)
        for hub in q.get("also", []):
            assert hub in HUBS and hub not in sources and (docs / hub).is_file(), (q["question"], hub)
    with open(HERE / "questions.jsonl", "w", encoding="utf-8", newline="\n") as f:
        for q in QUESTIONS:
            f.write(json.dumps(q, ensure_ascii=False) + "\n")
    return len(QUESTIONS)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--git-dir", type=Path, help="bare git mirror of " + REPO +
                        f" (default: $MIRROR_DIR/{MIRROR_NAME}/repo)")
    args = parser.parse_args()
    git_dir = args.git_dir
    if git_dir is None and os.environ.get("MIRROR_DIR"):
        git_dir = Path(os.environ["MIRROR_DIR"]) / MIRROR_NAME / "repo"
    if args.git_dir is not None and not args.git_dir.is_dir():
        sys.exit(f"--git-dir {args.git_dir}: not a directory")
    if git_dir is not None and git_dir.is_dir():
        copy_docs(git_dir)
        how = f"copied from {REPO}@{COMMIT[:12]}"
    else:
        check_docs()
        how = "no mirror found: docs/ left as is, checked against source/blobs.txt"
    n = write_questions()
    print(f"{len(repo_paths())} docs ({how}), {n} questions")


if __name__ == "__main__":
    main()
