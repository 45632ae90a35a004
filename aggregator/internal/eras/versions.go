package eras

import (
	"slices"
	"strings"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
)

// LegacyVersions are the versions of the legacy era served, oldest first.
var LegacyVersions = []string{"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"}

// LatestLegacy is the newest version of the legacy era.
var LatestLegacy = LegacyVersions[len(LegacyVersions)-1]

// IsLegacy reports whether version is one of LegacyVersions.
func IsLegacy(version string) bool { return slices.Contains(LegacyVersions, version) }

// Lists reports whether a JSON array of versions (raw) names version.
func Lists(versions []byte, version string) bool {
	return anyVersion(versions, func(v string) bool { return v == version })
}

// ListsLegacy reports whether a JSON array of versions (raw) names one of
// LegacyVersions.
func ListsLegacy(versions []byte) bool { return anyVersion(versions, IsLegacy) }

func anyVersion(versions []byte, match func(string) bool) bool {
	vs, _ := jsonrpc.Elements(versions)
	return slices.ContainsFunc(vs, func(v []byte) bool { s, _ := jsonrpc.String(v); return match(s) })
}

// RefusesLegacy reports whether an error answering initialize is a modern
// server's refusal: it names the modern version in data.supported (as
// -32022 does) or in its message (the spec leaves the code of a
// modern-only server's answer to initialize to the server, and asks it to
// name its versions).
func RefusesLegacy(errObj []byte) bool {
	data, _ := jsonrpc.Member(errObj, "data")
	supported, _ := jsonrpc.Member(data, "supported")
	if Lists(supported, ModernVersion) {
		return true
	}
	message, _ := jsonrpc.StringMember(errObj, "message")
	return strings.Contains(message, ModernVersion)
}

// AppendVersions appends ModernVersions as a JSON array.
func AppendVersions(b []byte) []byte {
	b = append(b, '[')
	for i, v := range ModernVersions {
		if i > 0 {
			b = append(b, ',')
		}
		b = jsonrpc.AppendString(b, v)
	}
	return append(b, ']')
}

// UnsupportedVersionData is the data of the -32022 answer to a request of
// version requested: the versions served, and the one requested.
func UnsupportedVersionData(requested string) []byte {
	b := AppendVersions([]byte(`{"supported":`))
	b = jsonrpc.AppendString(append(b, `,"requested":`...), requested)
	return append(b, '}')
}
