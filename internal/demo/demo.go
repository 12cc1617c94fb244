package demo

import (
	"bytes"
	"context"
	"embed"
	"fmt"
	"io/fs"

	"github.com/kubediagnose/kubectl-diagnose/internal/dump"
	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// Namespace is the one namespace the demo dump holds.
const Namespace = "telemetry"

//go:embed dump
var files embed.FS

// FS returns the embedded dump in the `kubectl cluster-info dump --output-directory` layout:
// nodes.json at the root, telemetry/*.json and telemetry/<pod>/logs.txt below it.
func FS() fs.FS {
	sub, err := fs.Sub(files, "dump")
	if err != nil {
		panic(fmt.Sprintf("demo: embedded dump: %v", err)) // "dump" is a valid path; cannot fail
	}
	return sub
}

// Read parses the embedded dump into a new snapshot whose source is the demo.
func Read() (*snapshot.Snapshot, error) {
	// The files are joined in walk order into what `kubectl cluster-info dump` writes to stdout
	// (JSON lists and log blocks one after another), which dump.ReadBytes reads as one stream.
	var stream bytes.Buffer
	err := fs.WalkDir(FS(), ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(FS(), path)
		if err != nil {
			return err
		}
		stream.Write(data)
		if len(data) > 0 && data[len(data)-1] != '\n' {
			stream.WriteByte('\n')
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read demo dump: %w", err)
	}
	s, err := dump.ReadBytes("demo", stream.Bytes())
	if err != nil {
		return nil, fmt.Errorf("read demo dump: %w", err)
	}
	s.Source = snapshot.SourceInfo{Type: snapshot.SourceDemo, Skipped: s.Source.Skipped}
	return s, nil
}

// Source returns a snapshot.Source that reads the embedded dump on every call.
func Source() snapshot.Source { return source{} }

type source struct{}

func (source) Snapshot(ctx context.Context) (*snapshot.Snapshot, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return Read()
}
