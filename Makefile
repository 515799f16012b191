# Mausbox: `make sim` runs the virtual unit, `make test` runs every test. Both set up .venv first.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.setup-stamp
RUNSTAMP := $(VENV)/.run-stamp
PORT ?=
PORT_ARG := $(if $(PORT),--port $(PORT),)

.DEFAULT_GOAL := help
.PHONY: help setup mp32 vports test check sim bench catalogs deploy flash image clean web

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-8s %s\n", $$1, $$2}'

# pip -qq: errors only (a pip configured with a missing find-links folder warns for every package); one line
# per step says what is happening instead.
PIP := $(BIN)/python -m pip install -qq --disable-pip-version-check

# Two steps, so the first `make sim` waits only for what running a unit needs (requirements.txt: the host's
# runtime, pinned); `make test`, `check` and `bench` add the test and check tools (requirements-dev.txt).
$(RUNSTAMP): requirements.txt pyproject.toml
	@echo "setting up $(VENV) with the pinned tools a unit needs (about a minute) ..."
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@$(PIP) --upgrade pip
	@$(PIP) -r requirements.txt
	@$(PIP) --no-deps -e .
	@touch $@

$(STAMP): $(RUNSTAMP) requirements-dev.txt
	@echo "adding the pinned test and check tools to $(VENV) ..."
	@$(PIP) -r requirements-dev.txt
	@echo "installing the MicroPython type stubs into typings/ ..."
	@rm -rf typings && $(PIP) --no-deps --no-user --target typings \
		micropython-esp32-stubs==1.29.0.post1 micropython-stdlib-stubs==1.29.0.post2
	@echo "$(VENV) is ready"
	@touch $@

# The 32-bit MicroPython (the ESP32's object sizes) is built once from the pinned source and cached in
# ~/.cache/mausbox; without a 32-bit C library it says what to install and the rest still works.
mp32: $(RUNSTAMP)
	@$(BIN)/python -m mausbox.mpbuild --optional

# mpremote and pyserial in the venv list running virtual units (host/mausbox/sim/ports.py).
vports: $(RUNSTAMP)
	@$(BIN)/python -m mausbox.sim.ports --install > /dev/null

setup: $(STAMP) mp32 vports ## create or refresh .venv with every pinned tool, and build the 32-bit MicroPython
	@true

check: $(STAMP) ## mpy-cross every firmware file, ruff, type-check firmware and host
	$(BIN)/python -m mausbox.devcheck

# The suite starts hundreds of Python processes (the CLI, virtual units, pytest's workers): each compiles every
# module it imports unless bytecode is cached, so the run caches it in the venv even where the environment says
# PYTHONDONTWRITEBYTECODE (and the source tree gets no __pycache__ folders either way).
test: check mp32 vports ## set up if needed, then run the whole suite (CPython and MicroPython)
	PYTHONDONTWRITEBYTECODE= PYTHONPYCACHEPREFIX=$(CURDIR)/$(VENV)/pycache $(BIN)/python -m pytest -n 4 --dist loadfile --no-loadscope-reorder -q --durations=20 tests

sim: $(RUNSTAMP) mp32 vports ## run the virtual unit in this terminal
	$(BIN)/mausbox sim

bench: $(STAMP) mp32 vports ## print benchmark figures, one `name: value unit` per line
	$(BIN)/python bench/run.py

catalogs: $(STAMP) ## compile the built-in catalogs again (maus/catalogs/*.cat) after changing a .json
	$(BIN)/python -m mausbox.catalogc

deploy: $(RUNSTAMP) ## copy the firmware to a unit: make deploy PORT=/dev/ttyUSB0
	$(BIN)/mausbox deploy $(PORT_ARG)

flash: $(RUNSTAMP) ## write MicroPython and the firmware: make flash PORT=/dev/ttyUSB0
	$(BIN)/mausbox flash $(PORT_ARG)

# The app frozen into a MicroPython ESP32 image (bytecode and names in flash, not in the heap). Needs an
# ESP-IDF environment (. $$IDF_PATH/export.sh) and a MicroPython checkout: not exercised here (no ESP-IDF
# on this machine or in CI; the same manifest frozen into the unix port is: tests/host/test_frozen_image.py).
# firmware/manifest_esp32.py keeps the port's own frozen modules (_boot.py, neopixel). Catalogs and prompt texts
# are data files: `mausbox deploy` then puts them in /maus-data on the filesystem (docs/build.md section 7).
MPY_DIR ?=
IMAGE_BOARD ?= ESP32_GENERIC
image: ## build an ESP32 image with the app frozen: make image MPY_DIR=~/micropython [IMAGE_BOARD=ESP32_GENERIC]
	@test -n "$(MPY_DIR)" || { echo "make image MPY_DIR=/path/to/micropython (a checkout with ESP-IDF set up)"; exit 2; }
	@command -v idf.py >/dev/null || { echo "ESP-IDF not found: run . \$$IDF_PATH/export.sh first"; exit 2; }
	$(MAKE) -C $(MPY_DIR)/ports/esp32 BOARD=$(IMAGE_BOARD) FROZEN_MANIFEST=$(CURDIR)/firmware/manifest_esp32.py
	@echo "image: $(MPY_DIR)/ports/esp32/build-$(IMAGE_BOARD)/firmware.bin (mausbox flash --firmware it)"

clean: ## remove the venv, caches and build output
	rm -rf $(VENV) typings build .pytest_cache .mypy_cache .ruff_cache

web: $(STAMP) ## build the virtual unit's web page into build/web/ (npm ci fetches the pinned MicroPython WebAssembly port)
	$(BIN)/python -m mausbox.web
