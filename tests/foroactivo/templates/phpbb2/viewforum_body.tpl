<!-- follows Etana/template@3ca46e4257dea5e96ac85ce43f1c005d1c1b04fe src/subsilver/viewforum_body.tpl (trimmed: the title, the pagination, TOPICS_LIST_BOX) -->
<table width="100%" border="0" cellspacing="1" cellpadding="0">
	<tr><td align="left" valign="bottom"><h1 class="cattitle"><a href="{U_VIEW_FORUM}">{FORUM_NAME}</a></h1></td></tr>
	<tr><td align="right" valign="bottom" nowrap="nowrap"><span class="gensmall">{PAGINATION}</span></td></tr>
</table>
{TOPICS_LIST_BOX}
<table width="100%" border="0" cellspacing="0" cellpadding="0"><tr><td align="right"><span class="nav">{PAGINATION}</span></td></tr></table>
