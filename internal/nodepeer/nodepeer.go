// Package nodepeer finds what the tests that drive Node.js peers need: a
// Node.js the test peers accept and the repository's installed testpeers
// packages. Without them a test skips, unless WOPINTEROP_REQUIRE_PEERS=1
// (CI) makes a missing peer a failure.
package nodepeer

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"sync"
	"testing"
)

// MinMajor is the Node.js major version testpeers/package.json declares.
const MinMajor = 22

// Required reports whether a missing peer fails the test instead of
// skipping it.
func Required() bool { return os.Getenv("WOPINTEROP_REQUIRE_PEERS") == "1" }

// Find returns the Node.js binary ($WOPINTEROP_NODE, else node on PATH)
// and the repository root, after checking the version and that every npm
// package in pkgs is installed under testpeers/node_modules. Anything
// missing skips t, or fails it when peers are required.
func Find(t testing.TB, pkgs ...string) (node, root string) {
	t.Helper()
	missing := func(format string, args ...any) {
		t.Helper()
		if Required() {
			t.Fatalf("nodepeer: "+format+" (WOPINTEROP_REQUIRE_PEERS=1)", args...)
		}
		t.Skipf("nodepeer: "+format+"; set WOPINTEROP_NODE and run npm ci in testpeers", args...)
	}
	root, err := moduleRoot()
	if err != nil {
		missing("%v", err)
	}
	node = os.Getenv("WOPINTEROP_NODE")
	if node == "" {
		if node, err = exec.LookPath("node"); err != nil {
			missing("no Node.js: WOPINTEROP_NODE is unset and node is not on PATH")
		}
	}
	out, err := exec.Command(node, "--version").Output()
	if err != nil {
		missing("%s --version: %v", node, err)
	}
	if major := majorOf(out); major < MinMajor {
		missing("Node.js %s is older than %d", bytes.TrimSpace(out), MinMajor)
	}
	for _, pkg := range pkgs {
		if _, err := os.Stat(filepath.Join(root, "testpeers", "node_modules", filepath.FromSlash(pkg), "package.json")); err != nil {
			missing("testpeers/node_modules lacks %s", pkg)
		}
	}
	return node, root
}

var versionRE = regexp.MustCompile(`^v([0-9]+)\.`)

// majorOf reads the major version of `node --version` ("v22.3.0"), 0 when
// it cannot.
func majorOf(out []byte) int {
	m := versionRE.FindSubmatch(bytes.TrimSpace(out))
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(string(m[1]))
	return n
}

// moduleRoot is the nearest directory above the working directory (a
// test's package directory) holding go.mod.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}

// Buffer collects a peer process's output for a failing test's log; it is
// safe for the process's writers and the test to use at once.
type Buffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// Len is how many bytes were written so far.
func (b *Buffer) Len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Len()
}

// String returns what was written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
