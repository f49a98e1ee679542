// promptfoo 0.123.1's `is-sql` and `contains-sql` (its src/assertions/sql.ts,
// as its dist runs it), over node-sql-parser's build for the database,
// which the plugin places above this code as `Parser` (see sql.rs). The
// entry is `check(output, {kind, value})`: both forms' verdicts at once.
const STANDARD_SELECT_MODIFIER_PATTERN = "(?:all|distinct)";
const MYSQL_SELECT_MODIFIER_PATTERN = "(?:all|distinct(?:row)?|high_priority|straight_join|sql_(?:big_result|buffer_result|cache|calc_found_rows|no_cache|small_result))";
const IDENTIFIER_PATTERN = "[A-Za-z_][A-Za-z0-9_]*";
function createLikelyMissingCommaPattern(selectModifierPattern) {
	return new RegExp(String.raw`\bselect\s+(?:${selectModifierPattern}\s+)*(?!${selectModifierPattern}\b)${IDENTIFIER_PATTERN}\s+${IDENTIFIER_PATTERN}\s+from\b`, "i");
}
const STANDARD_LIKELY_MISSING_COMMA_PATTERN = createLikelyMissingCommaPattern(STANDARD_SELECT_MODIFIER_PATTERN);
const MYSQL_LIKELY_MISSING_COMMA_PATTERN = createLikelyMissingCommaPattern(MYSQL_SELECT_MODIFIER_PATTERN);
const MYSQL_FAMILY_DATABASES = new Set(["MySQL", "MariaDB"]);
const BRACKET_IDENTIFIER_DATABASES = new Set(["TransactSQL", "Sqlite"]);
const SQL_EXPRESSION_PLACEHOLDER = " ? ";
function getLikelyMissingCommaPattern(databaseType) {
	return MYSQL_FAMILY_DATABASES.has(databaseType) ? MYSQL_LIKELY_MISSING_COMMA_PATTERN : STANDARD_LIKELY_MISSING_COMMA_PATTERN;
}
const DOLLAR_QUOTE_DELIMITER_PATTERN = /^\$(?:[A-Za-z_][A-Za-z0-9_]*)?\$/;
function readDollarQuoteDelimiter(sql, start) {
	return DOLLAR_QUOTE_DELIMITER_PATTERN.exec(sql.slice(start))?.[0];
}
function findQuotedTextEnd(sql, start, quote) {
	const closingQuote = quote === "[" ? "]" : quote;
	let cursor = start + 1;
	while (cursor < sql.length) {
		if (closingQuote !== "]" && sql[cursor] === "\\") {
			cursor += 2;
			continue;
		}
		if (sql[cursor] === closingQuote) {
			if (sql[cursor + 1] === closingQuote) {
				cursor += 2;
				continue;
			}
			return cursor + 1;
		}
		cursor++;
	}
	return sql.length;
}
function stripIgnoredSqlText(sql, databaseType) {
	const chunks = [];
	const supportsBracketIdentifiers = BRACKET_IDENTIFIER_DATABASES.has(databaseType);
	let plainTextStart = 0;
	let cursor = 0;
	while (cursor < sql.length) {
		const character = sql[cursor];
		let ignoredTextEnd;
		let replacement = " ";
		if (character === "'" || character === "\"" || character === "`" || character === "[" && supportsBracketIdentifiers) {
			ignoredTextEnd = findQuotedTextEnd(sql, cursor, character);
			replacement = SQL_EXPRESSION_PLACEHOLDER;
		} else if (character === "-" && sql[cursor + 1] === "-" || character === "#") {
			ignoredTextEnd = cursor + 1;
			while (ignoredTextEnd < sql.length && sql[ignoredTextEnd] !== "\r" && sql[ignoredTextEnd] !== "\n") ignoredTextEnd++;
		} else if (character === "/" && sql[cursor + 1] === "*") {
			const commentEnd = sql.indexOf("*/", cursor + 2);
			ignoredTextEnd = commentEnd === -1 ? sql.length : commentEnd + 2;
		} else if (character === "$") {
			const delimiter = readDollarQuoteDelimiter(sql, cursor);
			if (delimiter) {
				const quoteEnd = sql.indexOf(delimiter, cursor + delimiter.length);
				ignoredTextEnd = quoteEnd === -1 ? sql.length : quoteEnd + delimiter.length;
				replacement = SQL_EXPRESSION_PLACEHOLDER;
			}
		}
		if (ignoredTextEnd === void 0) {
			cursor++;
			continue;
		}
		chunks.push(sql.slice(plainTextStart, cursor), replacement);
		cursor = ignoredTextEnd;
		plainTextStart = cursor;
	}
	chunks.push(sql.slice(plainTextStart));
	return chunks.join("");
}
const handleIsSql = ({ renderedValue, outputString, inverse }) => {
	let pass = false;
	let databaseType = "MySQL";
	let allowedTables;
	let allowedColumns;
	if (renderedValue && typeof renderedValue === "object") {
		const value = renderedValue;
		databaseType = value.databaseType || "MySQL";
		allowedTables = value.allowedTables;
		allowedColumns = value.allowedColumns;
	}
	if (renderedValue && typeof renderedValue !== "object") throw new Error("is-sql assertion must have a object value.");
	const sqlParser = new Parser();
	const opt = { database: databaseType };
	const failureReasons = [];
	const normalizedSql = outputString.trim();
	if (normalizedSql.length === 0) failureReasons.push(`SQL statement does not conform to the provided ${databaseType} database syntax.`);
	if (/`/.test(normalizedSql) && (normalizedSql.match(/`/g)?.length ?? 0) % 2 !== 0) failureReasons.push(`SQL statement does not conform to the provided ${databaseType} database syntax.`);
	const sqlForHeuristics = stripIgnoredSqlText(normalizedSql, databaseType);
	if (getLikelyMissingCommaPattern(databaseType).test(sqlForHeuristics)) failureReasons.push(`SQL statement does not conform to the provided ${databaseType} database syntax.`);
	if (databaseType === "MySQL" && /\bgenerate_series\s*\(/i.test(normalizedSql)) failureReasons.push(`SQL statement does not conform to the provided ${databaseType} database syntax.`);
	try {
		sqlParser.astify(outputString, opt);
		pass = !inverse;
	} catch {
		pass = inverse;
		failureReasons.push(`SQL statement does not conform to the provided ${databaseType} database syntax.`);
	}
	if (failureReasons.length > 0) pass = inverse;
	if (allowedTables) {
		opt.type = "table";
		try {
			sqlParser.whiteListCheck(outputString, allowedTables, opt);
		} catch (err) {
			pass = inverse;
			const error = err;
			let actualTables = [];
			try {
				const { tableList } = sqlParser.parse(outputString, opt);
				actualTables = tableList || [];
			} catch {}
			if (actualTables.length > 0) failureReasons.push(`SQL references unauthorized table(s). Found: [${actualTables.join(", ")}]. Allowed: [${allowedTables.join(", ")}].`);
			else failureReasons.push(`SQL validation failed: ${error.message}.`);
		}
	}
	if (allowedColumns) {
		opt.type = "column";
		const normalizedAllowedColumns = [...allowedColumns];
		for (const item of allowedColumns) {
			const parts = item.split("::");
			if (parts.length === 3 && parts[1] !== "null") {
				const alt = `${parts[0]}::null::${parts[2]}`;
				if (!normalizedAllowedColumns.includes(alt)) normalizedAllowedColumns.push(alt);
			}
		}
		try {
			sqlParser.whiteListCheck(outputString, normalizedAllowedColumns, opt);
		} catch (err) {
			pass = inverse;
			const error = err;
			let actualColumns = [];
			try {
				const { columnList } = sqlParser.parse(outputString, opt);
				actualColumns = columnList || [];
			} catch {}
			if (actualColumns.length > 0) failureReasons.push(`SQL references unauthorized column(s). Found: [${actualColumns.join(", ")}]. Allowed: [${allowedColumns.join(", ")}].`);
			else failureReasons.push(`SQL validation failed: ${error.message}.`);
		}
	}
	if (inverse && pass === false && failureReasons.length === 0) failureReasons.push("The output SQL statement is valid");
	return {
		pass,
		score: pass ? 1 : 0,
		reason: pass ? "Assertion passed" : failureReasons.join(" ")
	};
};
function parseCodeFence(line) {
	let index = 0;
	while (index < 3 && (line[index] === " " || line[index] === "	")) index++;
	const character = line[index];
	if (character !== "`" && character !== "~") return;
	const fenceStart = index;
	while (line[index] === character) index++;
	const length = index - fenceStart;
	if (length < 3) return;
	const info = line.slice(index);
	let whitespaceIndex = 0;
	while (whitespaceIndex < info.length && (info[whitespaceIndex] === " " || info[whitespaceIndex] === "	")) whitespaceIndex++;
	return {
		character,
		length,
		info,
		hasOnlyTrailingWhitespace: whitespaceIndex === info.length
	};
}
function extractSqlCodeBlocks(output) {
	const sqlBlocks = [];
	let activeBlock;
	for (const line of output.split(/\r\n?|\n/)) {
		const fence = parseCodeFence(line);
		if (!activeBlock) {
			if (fence) {
				const language = fence.info.trim().toLowerCase();
				activeBlock = {
					body: [],
					fenceCharacter: fence.character,
					fenceLength: fence.length,
					isSql: language === "" || language === "sql"
				};
			}
			continue;
		}
		if (fence?.hasOnlyTrailingWhitespace && fence.character === activeBlock.fenceCharacter && fence.length >= activeBlock.fenceLength) {
			if (activeBlock.isSql) sqlBlocks.push(activeBlock.body.join("\n").trim());
			activeBlock = void 0;
		} else activeBlock.body.push(line);
	}
	return sqlBlocks;
}
const handleContainsSql = (assertionParams) => {
	const outputString = assertionParams.outputString;
	const sqlBlocks = extractSqlCodeBlocks(outputString);
	const candidates = sqlBlocks.length > 0 ? sqlBlocks : [outputString];
	let failureReason = "Output does not contain valid SQL";
	let containsValidSql = false;
	for (const candidate of candidates) {
		if (candidate.trim().length === 0) continue;
		const result = handleIsSql({
			...assertionParams,
			outputString: candidate,
			inverse: false
		});
		if (result.pass) {
			containsValidSql = true;
			break;
		}
		failureReason = result.reason;
	}
	const pass = assertionParams.inverse ? !containsValidSql : containsValidSql;
	return {
		pass,
		score: pass ? 1 : 0,
		reason: pass ? "Assertion passed" : containsValidSql ? "The output SQL statement is valid" : failureReason
	};
};
module.exports.check = function (output, { kind, value }) {
	const outputString = typeof output === "string" ? output : JSON.stringify(output);
	const handle = kind === "contains-sql" ? handleContainsSql : handleIsSql;
	const form = (inverse) => handle({ renderedValue: value, outputString, inverse });
	return { direct: form(false), negated: form(true) };
};
