<!-- follows Etana/template@3ca46e4257dea5e96ac85ce43f1c005d1c1b04fe src/subsilver/error_body.tpl -->
<table class="forumline" width="100%" border="0" cellspacing="1" cellpadding="4">
	<tr>
		<td>
		<table width="100%" border="0" cellspacing="0" cellpadding="1">
			<tr><td class="row1">&nbsp;</td></tr>
			<tr><td align="center" class="row1"><span class="gen">{ERROR_MESSAGE}</span></td></tr>
			<tr><td class="row1">&nbsp;</td></tr>
		</table>
		</td>
	</tr>
</table>
<br clear="all" />
