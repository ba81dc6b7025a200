package feed

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// record is an OSV record in the shape of a real npm one.
func record(id string) []byte {
	return fmt.Appendf(nil, `{"schema_version":"1.6.0","id":%q,"modified":"2024-05-01T10:00:00Z","published":"2024-04-30T10:00:00Z",`+
		`"summary":"test record","affected":[{"package":{"ecosystem":"npm","name":"pkg-%s"},`+
		`"ranges":[{"type":"SEMVER","events":[{"introduced":"0"},{"fixed":"1.2.3"}]}]}]}`, id, id)
}

type zentry struct {
	name string
	data []byte
}

// writeZip writes entries as a deflated zip file and returns its path.
func writeZip(t *testing.T, entries []zentry) string {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range entries {
		w, err := zw.Create(e.name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(e.data); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return writeFile(t, buf.Bytes())
}

func writeFile(t *testing.T, b []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "all.zip")
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// rawZip writes one entry whose header is written by hand: the declared
// size and CRC may lie about the deflated data.
func rawZip(t *testing.T, name string, data []byte, declared uint64, crc uint32) string {
	t.Helper()
	var comp bytes.Buffer
	fw, _ := flate.NewWriter(&comp, flate.BestSpeed)
	_, _ = fw.Write(data)
	_ = fw.Close()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, err := zw.CreateRaw(&zip.FileHeader{Name: name, Method: zip.Deflate, CRC32: crc,
		CompressedSize64: uint64(comp.Len()), UncompressedSize64: declared})
	if err != nil {
		t.Fatal(err)
	}
	_, _ = w.Write(comp.Bytes())
	_ = zw.Close()
	return writeFile(t, buf.Bytes())
}

// Both passes see every record once, with the hash of its exact bytes;
// directories and non-JSON entries are left out; Read gives the chosen
// records' bytes in index order.
func TestArchiveScanAndRead(t *testing.T) {
	t.Parallel()
	path := writeZip(t, []zentry{
		{"GHSA-aaaa-bbbb-cccc.json", record("GHSA-aaaa-bbbb-cccc")},
		{"docs/", nil},
		{"README.txt", []byte("not a record")},
		{"MAL-2024-1234.json", record("MAL-2024-1234")},
		{"GHSA-dddd-eeee-ffff.json", record("GHSA-dddd-eeee-ffff")},
	})
	a, err := OpenArchive(path, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if a.Len() != 3 {
		t.Errorf("Len = %d, want 3 records", a.Len())
	}
	var seen []Entry
	if err := a.Scan(func(e Entry) error { seen = append(seen, e); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(seen) != 3 || seen[0].Name != "GHSA-aaaa-bbbb-cccc.json" || seen[1].Name != "MAL-2024-1234.json" {
		t.Fatalf("scanned %+v", seen)
	}
	if seen[1].Hash != sha256.Sum256(record("MAL-2024-1234")) || seen[1].Size != int64(len(record("MAL-2024-1234"))) || seen[1].TooLarge {
		t.Errorf("entry %+v: wrong hash or size", seen[1])
	}
	var got []string
	err = a.Read([]int{seen[2].Index, seen[0].Index, seen[2].Index}, func(e Entry, b []byte) error {
		if e.Hash != sha256.Sum256(b) {
			t.Errorf("%s: hash does not match the bytes", e.Name)
		}
		got = append(got, string(b))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0] != string(record("GHSA-aaaa-bbbb-cccc")) || got[1] != string(record("GHSA-dddd-eeee-ffff")) {
		t.Errorf("read %q", got)
	}
	if err := a.Read([]int{1}, func(Entry, []byte) error { return nil }); err == nil {
		t.Error("Read of a directory entry succeeded")
	}
	stop := errors.New("stop")
	if err := a.Scan(func(Entry) error { return stop }); !errors.Is(err, stop) {
		t.Errorf("Scan returned %v, want the callback's error", err)
	}
}

// A record of 10 MB is reported TooLarge and never read; the others stand.
func TestArchiveTooLargeRecord(t *testing.T) {
	t.Parallel()
	big := append([]byte(`{"id":"GHSA-big","details":"`), bytes.Repeat([]byte("A"), 10<<20)...)
	big = append(big, `"}`...)
	path := writeZip(t, []zentry{{"GHSA-big.json", big}, {"GHSA-ok.json", record("GHSA-ok")}})
	a, err := OpenArchive(path, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	var entries []Entry
	if err := a.Scan(func(e Entry) error { entries = append(entries, e); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(entries) != 2 || !entries[0].TooLarge || entries[0].Hash != ([32]byte{}) || entries[1].TooLarge {
		t.Fatalf("entries %+v", entries)
	}
	n := 0
	if err := a.Read([]int{entries[0].Index, entries[1].Index}, func(e Entry, b []byte) error {
		n++
		if e.Name != "GHSA-ok.json" {
			t.Errorf("Read gave %s", e.Name)
		}
		return nil
	}); err != nil || n != 1 {
		t.Fatalf("Read: %d records, %v", n, err)
	}
}

// A zip bomb (a few KiB expanding past MaxUncompressed), too many entries,
// an archive over MaxArchive, a truncated zip and a file that is no zip are
// refused by OpenArchive with ErrArchive, before any entry is read.
func TestOpenArchiveRefuses(t *testing.T) {
	t.Parallel()
	good := writeZip(t, []zentry{{"A.json", record("A")}, {"B.json", record("B")}})
	goodBytes, _ := os.ReadFile(good)
	bomb := writeZip(t, []zentry{{"BOMB.json", bytes.Repeat([]byte{'0'}, 20<<20)}})
	if st, _ := os.Stat(bomb); st.Size() > 1<<20 {
		t.Fatalf("the bomb is %d bytes compressed, not a bomb", st.Size())
	}
	cases := []struct {
		name, path string
		lim        Limits
		want       string
	}{
		{"zip bomb", bomb, Limits{MaxUncompressed: 8 << 20}, "zip bomb"},
		{"too many entries", good, Limits{MaxEntries: 1}, "declares 2 entries"},
		{"archive too large", good, Limits{MaxArchive: 100}, "more than the limit of 100"},
		{"truncated", writeFile(t, goodBytes[:len(goodBytes)/2]), Limits{}, "truncated"},
		{"not a zip", writeFile(t, []byte(`{"id":"not-a-zip"}`)), Limits{}, "not a zip"},
	}
	for _, c := range cases {
		a, err := OpenArchive(c.path, c.lim)
		if err == nil {
			a.Close()
			t.Errorf("%s: opened", c.name)
			continue
		}
		if !errors.Is(err, ErrArchive) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want ErrArchive saying %q", c.name, err, c.want)
		}
	}
}

// An entry that yields more bytes than it declares, or whose CRC is wrong,
// ends the scan with ErrArchive: a malformed archive is known before
// anything is stored.
func TestArchiveScanRefusesLyingEntries(t *testing.T) {
	t.Parallel()
	data := record("GHSA-liar")
	cases := map[string]string{
		"size lies": rawZip(t, "GHSA-liar.json", data, 10, crc32.ChecksumIEEE(data)),
		"bad crc":   rawZip(t, "GHSA-liar.json", data, uint64(len(data)), crc32.ChecksumIEEE(data)+1),
	}
	for name, path := range cases {
		a, err := OpenArchive(path, Limits{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		called := 0
		err = a.Scan(func(Entry) error { called++; return nil })
		a.Close()
		if !errors.Is(err, ErrArchive) || !strings.Contains(err.Error(), "GHSA-liar.json") || called != 0 {
			t.Errorf("%s: Scan = %v after %d calls, want ErrArchive naming the entry and no call", name, err, called)
		}
	}
}

// The entry count is read from the end of the central directory before
// archive/zip parses the directory, in the zip64 form too (more than
// 65,535 entries).
func TestDeclaredEntriesZip64(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	const n = 70_000
	for i := range n {
		if _, err := zw.CreateHeader(&zip.FileHeader{Name: fmt.Sprintf("%d.json", i), Method: zip.Store}); err != nil {
			t.Fatal(err)
		}
	}
	_ = zw.Close()
	got, ok := declaredEntries(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if !ok || got != n {
		t.Fatalf("declaredEntries = %d %v, want %d", got, ok, n)
	}
	_, err := OpenArchive(writeFile(t, buf.Bytes()), Limits{MaxEntries: n - 1})
	if !errors.Is(err, ErrArchive) || !strings.Contains(err.Error(), "declares 70000 entries") {
		t.Fatalf("OpenArchive: %v", err)
	}
	if _, ok := declaredEntries(strings.NewReader("PK"), 2); ok {
		t.Error("a two-byte file declared entries")
	}
}
