// Package resolver reads and writes several entity types kept in one table and
// one partition (design guide §5 inheritance, §7 heterogeneous entity types).
package resolver
