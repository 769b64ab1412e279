<!-- follows Etana/template@3ca46e4257dea5e96ac85ce43f1c005d1c1b04fe src/subsilver/message_body.tpl -->
<table width="100%" border="0" cellspacing="2" cellpadding="0" align="center">
	<tr>
		<td class="nav"><a class="nav" href="{U_INDEX}"><span>Índice</span></a></td>
	</tr>
</table>
<table class="forumline" width="100%" border="0" cellspacing="1" cellpadding="4">
	<tr>
		<th class="thHead" height="25"><b>{MESSAGE_TITLE}</b></th>
	</tr>
	<tr>
		<td class="row1">
		<table width="100%" border="0" cellspacing="0" cellpadding="1">
			<tr><td>&nbsp;</td></tr>
			<tr><td align="center"><span class="gen">{MESSAGE_TEXT}</span></td></tr>
			<tr><td>&nbsp;</td></tr>
		</table>
		</td>
	</tr>
</table>
<br clear="all" />
