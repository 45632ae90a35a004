// Command packtool makes the two release outputs that need more than go
// build, tar and npm, with the standard library only (.ci/release runs it):
//
//	go run ./.ci/packtool fat OUT THIN...
//
// writes a universal (fat) Mach-O binary OUT holding the thin macOS
// binaries THIN (amd64 and arm64), as `lipo -create` does, so that the
// Claude Desktop bundle has one binary for every Mac.
//
//	go run ./.ci/packtool zip [-mtime UNIXTIME] OUT DIR
//
// writes the zip archive OUT of the files under DIR, by their paths
// relative to DIR, in sorted order, with their unix modes (an executable
// stays executable once unpacked) and all dated UNIXTIME (default 0): the
// layout of an .mcpb bundle as `mcpb pack` writes it, but reproducible.
package main

import (
	"archive/zip"
	"compress/flate"
	"debug/macho"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log"
	"os"
	"path/filepath"
	"time"
)

func main() {
	log.SetFlags(0)
	log.SetPrefix("packtool: ")
	if len(os.Args) < 2 {
		log.Fatal("usage: packtool fat OUT THIN... | packtool zip [-mtime UNIXTIME] OUT DIR")
	}
	var err error
	switch cmd, args := os.Args[1], os.Args[2:]; cmd {
	case "fat":
		if len(args) < 2 {
			log.Fatal("usage: packtool fat OUT THIN...")
		}
		err = writeFat(args[0], args[1:])
	case "zip":
		fs := flag.NewFlagSet("zip", flag.ExitOnError)
		mtime := fs.Int64("mtime", 0, "the date of every entry, in seconds since 1970")
		fs.Parse(args)
		if fs.NArg() != 2 {
			log.Fatal("usage: packtool zip [-mtime UNIXTIME] OUT DIR")
		}
		err = writeZip(fs.Arg(0), fs.Arg(1), time.Unix(*mtime, 0).UTC())
	default:
		err = fmt.Errorf("unknown command %q: want fat or zip", cmd)
	}
	if err != nil {
		log.Fatal(err)
	}
}

// fatAlign is the alignment of each slice in a fat file, as a power of 2:
// 16 KiB, the page size of arm64 macOS (lipo uses 2^14 for arm64 too).
const fatAlign = 14

// writeFat writes the fat Mach-O file out holding the thin files thin: a
// big-endian fat_header (magic, count), one fat_arch per slice (cputype,
// cpusubtype, offset, size, align), then each slice at an aligned offset.
func writeFat(out string, thin []string) error {
	type slice struct {
		cpu, sub uint32
		data     []byte
	}
	var slices []slice
	for _, path := range thin {
		f, err := macho.Open(path)
		if err != nil {
			return fmt.Errorf("fat: %s: %w", path, err)
		}
		cpu, sub := uint32(f.Cpu), f.SubCpu
		f.Close()
		data, err := os.ReadFile(path)
		if err != nil {
			return fmt.Errorf("fat: %w", err)
		}
		slices = append(slices, slice{cpu, sub, data})
	}
	header := []uint32{macho.MagicFat, uint32(len(slices))}
	offset := uint64(8 + 20*len(slices))
	var body []byte
	for _, s := range slices {
		offset = (offset + 1<<fatAlign - 1) &^ (1<<fatAlign - 1)
		if offset+uint64(len(s.data)) > 1<<32-1 {
			return errors.New("fat: the slices do not fit in 4 GiB")
		}
		header = append(header, s.cpu, s.sub, uint32(offset), uint32(len(s.data)), fatAlign)
		offset += uint64(len(s.data))
	}
	for _, v := range header {
		body = binary.BigEndian.AppendUint32(body, v)
	}
	for i, s := range slices {
		pad := int(header[2+5*i+2]) - len(body)
		body = append(append(body, make([]byte, pad)...), s.data...)
	}
	if err := os.WriteFile(out, body, 0o755); err != nil {
		return fmt.Errorf("fat: %w", err)
	}
	return nil
}

// writeZip writes the zip archive out of the regular files under dir.
func writeZip(out, dir string, mtime time.Time) (err error) {
	f, err := os.Create(out)
	if err != nil {
		return fmt.Errorf("zip: %w", err)
	}
	defer func() {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("zip: %w", cerr)
		}
	}()
	zw := zip.NewWriter(f)
	zw.RegisterCompressor(zip.Deflate, func(w io.Writer) (io.WriteCloser, error) {
		return flate.NewWriter(w, flate.BestCompression)
	})
	// WalkDir visits in lexical order: the entries come sorted.
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		return addFile(zw, dir, path, mtime)
	})
	if err != nil {
		return fmt.Errorf("zip: %s: %w", out, err)
	}
	if err := zw.Close(); err != nil {
		return fmt.Errorf("zip: %s: %w", out, err)
	}
	return nil
}

// addFile adds the file path, named by its path relative to dir.
func addFile(zw *zip.Writer, dir, path string, mtime time.Time) error {
	info, err := os.Stat(path)
	if err != nil {
		return err
	}
	rel, err := filepath.Rel(dir, path)
	if err != nil {
		return err
	}
	h := &zip.FileHeader{Name: filepath.ToSlash(rel), Method: zip.Deflate, Modified: mtime}
	h.SetMode(info.Mode().Perm())
	w, err := zw.CreateHeader(h)
	if err != nil {
		return err
	}
	src, err := os.Open(path)
	if err != nil {
		return err
	}
	defer src.Close()
	_, err = io.Copy(w, src)
	return err
}
