package osvgen

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// weakness is a kind of flaw as GHSA advisories of npm packages describe
// one: the summary's words, its CWE, severity word and a CVSS v3 vector.
type weakness struct {
	summary, cwe, severity, vector, explain string
}

var weaknesses = []weakness{
	{"Prototype Pollution", "CWE-1321", "HIGH", "CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:N/I:H/A:H",
		"A crafted key such as `__proto__` in user-supplied input is merged into the target object, which lets an attacker add or modify properties of Object.prototype."},
	{"Regular Expression Denial of Service (ReDoS)", "CWE-1333", "MODERATE", "CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:N/I:N/A:L",
		"A regular expression used to parse untrusted input backtracks catastrophically on long strings of repeated characters, blocking the event loop."},
	{"Cross-site Scripting (XSS) in rendered attributes", "CWE-79", "MODERATE", "CVSS:3.1/AV:N/AC:L/PR:N/UI:R/S:C/C:L/I:L/A:N",
		"Attribute values are not escaped before they are written into the generated HTML, so a value containing a quote can inject script into the page."},
	{"Path Traversal", "CWE-22", "HIGH", "CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:N/A:N",
		"Encoded `../` sequences in the request path are decoded after the path is checked, which lets a remote attacker read files outside the served directory."},
	{"Server-Side Request Forgery", "CWE-918", "HIGH", "CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:C/C:L/I:L/A:N",
		"A URL given by the client is fetched without checking its host, so requests can be sent to internal addresses and cloud metadata endpoints."},
	{"Improper Verification of Cryptographic Signature", "CWE-347", "CRITICAL", "CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:N",
		"Tokens signed with the `none` algorithm are accepted when no algorithm list is given, which allows an attacker to forge any claim."},
	{"Command Injection", "CWE-78", "CRITICAL", "CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H",
		"Arguments are concatenated into a shell command line without quoting; an argument containing `;` or `$(...)` runs commands of the attacker's choice."},
	{"Uncontrolled Resource Consumption", "CWE-400", "MODERATE", "CVSS:3.1/AV:N/AC:H/PR:N/UI:N/S:U/C:N/I:N/A:H",
		"A request with a very large number of header fields makes the parser allocate without bound, and a few such requests exhaust the process's memory."},
}

var nameWords = []string{"json", "parse", "merge", "deep", "url", "query", "string", "form", "data", "stream",
	"http", "proxy", "cookie", "token", "auth", "session", "template", "render", "markdown", "html",
	"path", "file", "glob", "zip", "tar", "image", "sharp", "color", "date", "time", "cli", "args",
	"config", "env", "yaml", "xml", "csv", "schema", "validate", "lodash", "util", "core", "router", "socket"}

var scopes = []string{"@types", "@babel", "@angular", "@nestjs", "@aws-sdk", "@vue", "@acme", "@fastly"}

// madeUpName is an npm package name: one or two words, sometimes a
// number, sometimes under a scope.
func madeUpName(rng *rand.Rand) string {
	n := nameWords[rng.IntN(len(nameWords))]
	if rng.IntN(2) == 0 {
		n += "-" + nameWords[rng.IntN(len(nameWords))]
	}
	if rng.IntN(3) == 0 {
		n += fmt.Sprint(rng.IntN(100))
	}
	if rng.IntN(5) == 0 {
		n = scopes[rng.IntN(len(scopes))] + "/" + n
	}
	return n
}

// versionPair is a range's introduced and fixed versions: "0" or a
// release, and a later release.
func versionPair(rng *rand.Rand) (introduced, fixed string) {
	major, minor, patch := rng.IntN(8), rng.IntN(20), rng.IntN(15)
	fixed = fmt.Sprintf("%d.%d.%d", major, minor, patch+1)
	if rng.IntN(3) == 0 {
		return "0", fixed
	}
	return fmt.Sprintf("%d.%d.0", major, rng.IntN(minor+1)), fixed
}

// details is a GHSA advisory's Markdown text, of a real one's length.
func details(rng *rand.Rand, name string, w weakness, fixed, lastAffected string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "### Impact\n%s\n\nAll users of `%s` who pass untrusted input to the affected functions are impacted. ", w.explain, name)
	b.WriteString("The issue was reported privately by a security researcher and confirmed by the maintainers.\n\n")
	b.WriteString("### Patches\n")
	if lastAffected != "" {
		fmt.Fprintf(&b, "No patched version is available yet; %s is the last affected release.\n\n", lastAffected)
	} else {
		fmt.Fprintf(&b, "The problem has been patched in version %s. Users should upgrade as soon as possible.\n\n", fixed)
	}
	b.WriteString("### Workarounds\n")
	if rng.IntN(2) == 0 {
		b.WriteString("Validate and sanitise input before it reaches the library, and reject keys and values that are not expected.\n\n")
	} else {
		b.WriteString("There is no known workaround other than upgrading.\n\n")
	}
	b.WriteString("### References\n- The fix commit and the release notes of the patched version.\n")
	return b.String()
}

var malSources = []string{"ossf-package-analysis", "ghsa-malware", "amazon-inspector", "reversing-labs", "socketdev"}

var malReasons = []string{
	"The package communicates with a domain associated with malicious activity.",
	"The package executes one or more commands associated with malicious behavior during installation.",
	"The package exfiltrates environment variables and credentials to a remote server.",
	"The package is a typosquat of a popular package and installs a remote access trojan.",
	"The package downloads and runs a second-stage payload from a remote host.",
}
